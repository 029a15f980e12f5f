"""Marks into cases, runs into records, records across processes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.model.results import AgentResponse, Grade
from evals.model.trajectory import Step
from evals.plan.runs import derive_seed
from evals.testing import AgentResult, EvalsRun
from evals.testing.marks import MarkError, case_id, merge, without_slot
from evals.testing.results import merged
from evals.testing.runs import Outcome, decode_record, encode_record, run_record


def test_the_nearest_mark_wins_and_tags_add_up_from_the_module_down():
    mark = merge(
        [
            ((), {"description": "near", "tags": ["param"], "metadata": {"k": 1}}),
            ((), {"description": "far", "repeat": 5, "tags": "function", "metadata": {"k": 0}}),
            ((), {"tags": ["module", "function"], "priority": "P0"}),
        ]
    )

    assert mark.description == "near"
    assert mark.repeat == 5
    assert mark.tags == ("module", "function", "param")
    assert mark.case_metadata() == {
        "k": 1,
        "tags": ["module", "function", "param"],
        "priority": "P0",
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"repeats": 3}, "unknown evals mark argument"),
        ({"repeat": 0}, "repeat must be a positive integer"),
        ({"repeat": True}, "repeat must be a positive integer"),
        ({"priority": "high"}, "use one of P0, P1, P2, P3"),
        ({"tags": 3}, "tags are a string or a list"),
        ({"case": ""}, "case is a non-empty string"),
        ({"metadata": []}, "metadata is a mapping"),
    ],
)
def test_a_mark_that_cannot_be_used_says_which_argument(kwargs, message):
    with pytest.raises(MarkError, match=message):
        merge([((), kwargs)])


def test_a_case_id_is_the_case_else_the_slug_of_the_description_else_the_node_id():
    assert case_id(merge([((), {"case": "c1", "description": "D"})]), "n") == "c1"
    assert case_id(merge([((), {"description": "Variación BUSI → 2024"})]), "n") == (
        "variación-busi-2024"
    )
    assert case_id(merge([]), "t.py::test_x[a]") == "t.py::test_x[a]"


IDS = st.text(st.sampled_from("abc-_01"), min_size=1, max_size=8)


@given(base=IDS, params=st.lists(IDS, max_size=2), agent=IDS, repeat=st.integers(0, 30))
def test_the_run_id_comes_off_the_end_of_the_node_id(base, params, agent, repeat):
    slot = f"{agent}-{repeat}"
    node = f"t.py::test_{base}"
    expected = f"{node}[{'-'.join(params)}]" if params else node

    assert without_slot(f"{node}[{'-'.join([*params, slot])}]", slot) == expected


def _run(**fields) -> EvalsRun:
    return EvalsRun(
        suite_id="s",
        case_id="c",
        agent="a",
        repeat=2,
        seed=derive_seed("s", "c", "a", 2),
        shared_seed=derive_seed("s", "c", "", 2),
        **fields,
    )


def _record(run: EvalsRun, outcome: Outcome):
    return run_record(run, outcome, case_index=3, agent_index=1, started_at=10.0, ended_at=10.5)


def test_a_run_becomes_the_record_evals_run_would_store():
    run = _run(vars={"q": "x"})
    run.record({"output": "hi", "cost": 0.01, "tokenUsage": {"total": 7}}, prompt="x?")

    record = _record(run, Outcome("pass"))

    assert record.key.as_tuple() == ("", "c", "a", 2)
    assert (record.case_index, record.agent_index) == (3, 1)
    assert record.seed == derive_seed("s", "c", "a", 2)
    assert record.metadata == {"shared_seed": derive_seed("s", "c", "", 2)}
    assert record.status == "pass" and record.grade.passed
    assert (record.prompt, record.vars, record.cost, record.total_tokens) == (
        "x?",
        {"q": "x"},
        0.01,
        7,
    )
    assert record.latency_ms == pytest.approx(500.0)


def test_fail_and_error_outcomes_and_an_uncompensated_policy_violation():
    failed = _record(_run(), Outcome("fail", "expected 6.45 %"))
    errored = _record(_run(), Outcome("error", "agent timed out after 2 s", "timeout"))
    caught = _run()
    caught.grades.append(Grade(False, 0.0, "[denylist] rm: denied", policy_violation=True))
    violated = _record(caught, Outcome("pass"))

    assert (failed.status, failed.grade.reason, failed.error) == ("fail", "expected 6.45 %", None)
    assert (errored.status, errored.grade, errored.error_kind) == ("error", None, "timeout")
    assert errored.error == "agent timed out after 2 s"
    assert violated.status == "fail"
    assert violated.grade.policy_violation
    assert violated.grade.reason == "[denylist] rm: denied"


def test_a_violation_seen_before_the_test_errored_still_counts():
    """Before: an errored test's record had no grade, so the violation its checks had
    seen before the error was lost to the policy gate."""
    run = _run()
    run.grades.append(
        Grade(False, 0.0, "[approval] issue_refund: no approval", policy_violation=True)
    )
    errored = _record(run, Outcome("error", "KeyError: 'total'", "agent_error"))

    assert (errored.status, errored.error_kind) == ("error", "agent_error")
    assert errored.grade.policy_violation and not errored.grade.passed
    assert [g.reason for g in errored.grade.component_results] == [
        "[approval] issue_refund: no approval"
    ]


def test_several_answers_of_one_run_add_up():
    first = AgentResult(
        AgentResponse(
            output="a", cost=0.01, token_usage={"total": 5}, trajectory=[Step("tool", "x")]
        ),
        "p",
    )
    second = AgentResult(
        AgentResponse(
            output="b", cost=0.02, token_usage={"total": 6}, trajectory=[Step("tool", "y")]
        )
    )

    both = merged([first, second])

    assert (both.output, both.prompt, both.tools) == ("b", "p", ["x", "y"])
    assert both.cost == pytest.approx(0.03)
    assert both.response.token_usage == {"total": 11}


def test_a_record_crosses_processes_even_with_values_pickle_cannot_hold():
    class Local:
        def __str__(self) -> str:
            return "local object"

    run = _run(vars={"when": Local()})
    run.record(
        AgentResponse(
            output={"answer": Local()},
            metadata={"fn": lambda: 1},
            trajectory=[Step("tool", "t", arguments={"o": Local()}, result=(1, 2))],
        )
    )
    record = _record(run, Outcome("pass"))

    back = decode_record(encode_record(record))

    assert back.key == record.key and back.status == "pass" and back.seed == record.seed
    assert back.response.output == {"answer": "local object"}
    assert back.vars == {"when": "local object"}
    assert back.response.trajectory[0].arguments == {"o": "local object"}
    assert back.response.trajectory[0].result == [1, 2]
    assert isinstance(encode_record(record), str)


def test_a_teams_own_answer_object_is_read_by_its_attributes():
    @dataclass
    class Reply:
        output: str
        cost: float
        usage: dict
        trajectory: list
        extra: str = "ignored"

        def cites_headline(self) -> bool:
            return '"' in self.output

    reply = Reply('"Un fondo ofrece comprar Busmar Hogar"', 0.004, {"prompt_tokens": 9}, [])
    reply.trajectory.append({"kind": "tool", "name": "buscar_noticias"})
    run = _run()

    recorded = run.record(reply, prompt="¿Qué titulares?")

    assert recorded.output == reply.output and recorded.prompt == "¿Qué titulares?"
    assert recorded.cost == 0.004
    assert recorded.response.token_usage == {"prompt": 9, "total": 9}
    assert recorded.tools == ["buscar_noticias"]
    assert run.answer() is recorded
    with pytest.raises(TypeError, match="an object with an `output` attribute"):
        run.record(object())
