"""Assertions with a `turn:`: one answer of a conversation graded as a run of its own."""

from __future__ import annotations

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

# Turn 1 looks something up and asks; turn 2 refunds; turn 3 thanks.
AGENT = """\
import json

def call_api(prompt, options, context):
    turn = sum(m["role"] == "user" for m in json.loads(prompt))
    replies = {
        1: ("Found it. Shall I refund?", [{"kind": "tool", "name": "lookup", "arguments": {}}]),
        2: ("Refunded 40 EUR.", [{"kind": "tool", "name": "refund", "arguments": {"amount": 40}}]),
    }
    text, steps = replies.get(turn, ("You're welcome.", []))
    return {"output": text, "trajectory": steps, "cost": 0.01 * turn}
"""

SUITE = """\
prompts: ["Support agent."]
providers: [file://agent.py]
defaultTest:
  provider:
    id: promptfoo:simulated-user
    config:
      provider:
        id: evals:scripted-user
        config:
          opening: "refund please"
          responses: ["yes", "thanks"]
tests:
  - assert:
{asserts}"""


def _components(write_suite, asserts: str):
    path = write_suite(SUITE.format(asserts=asserts), {"agent.py": AGENT})
    (record,) = run_evaluation(
        load_suite(path), RunOptions(use_store=False, progress=False)
    ).records
    return record, [(c.passed, c.reason) for c in record.grade.component_results]


def test_a_turn_is_graded_on_its_own_answer_steps_and_cost(write_suite):
    record, components = _components(
        write_suite,
        """\
      - {type: contains, value: "Shall I refund", turn: 1}
      - {type: not-contains, value: "Shall I refund", turn: 2}
      - {type: trajectory:tool-used, value: refund, turn: 2}
      - {type: not-trajectory:tool-used, value: refund, turn: 1}
      - {type: cost, threshold: 0.015, turn: 1}
      - {type: contains, value: "welcome", turn: last}
      - {type: contains, value: "Refunded", turn: -2}
""",
    )
    assert all(passed for passed, _ in components), components
    assert [reason.split(":")[0] for _, reason in components] == [
        "turn 1",
        "turn 2",
        "turn 2",
        "turn 1",
        "turn 1",
        "turn 3",
        "turn 2",
    ]
    assert record.status == "pass"


def test_each_turn_must_pass_and_the_first_failing_turn_decides(write_suite):
    _, components = _components(
        write_suite,
        """\
      - {type: not-icontains, value: refund, turn: each}
      - {type: icontains, value: "e", turn: each}
""",
    )
    (first_passed, first_reason), (second_passed, second_reason) = components
    assert not first_passed
    assert first_reason.startswith("turn 1: Expected output to not contain")
    assert second_passed and second_reason.startswith("turns 1, 2, 3: ")


def test_a_turn_never_reached_fails_and_the_whole_conversation_is_the_default(write_suite):
    record, components = _components(
        write_suite,
        """\
      - {type: contains, value: anything, turn: 9}
      - {type: contains, value: "User: refund please"}
      - {type: trajectory:tool-sequence, value: {steps: [lookup, refund]}}
""",
    )
    assert components[0] == (
        False,
        "turn 9: the conversation has no such turn (the agent answered turn(s) 1, 2, 3)",
    )
    assert components[1][0] and components[2][0]
    assert record.status == "fail"


def test_a_run_that_is_no_conversation_is_turn_one(write_suite):
    path = write_suite(
        """\
        prompts: ["{{q}}"]
        providers: [echo]
        tests:
          - vars: {q: hello}
            assert:
              - {type: equals, value: hello, turn: 1}
              - {type: equals, value: hello, turn: last}
              - {type: equals, value: hello, turn: 2, weight: 0}
        """
    )
    (record,) = run_evaluation(
        load_suite(path), RunOptions(use_store=False, progress=False)
    ).records
    assert record.status == "pass"
    assert [c.passed for c in record.grade.component_results] == [True, True, True]


@pytest.mark.parametrize(
    ("assertion", "message"),
    [
        ("{type: contains, value: a, turn: 0}", "must be a turn number, last or each, not 0"),
        ("{type: contains, value: a, turn: first}", "not 'first'"),
        ("{type: contains, value: a, turn: true}", "not True"),
        ("{type: max-score, turn: 1}", "grades whole runs and takes no turn"),
    ],
)
def test_a_bad_turn_stops_the_suite(write_suite, suite_error, assertion, message):
    path = write_suite(
        f"""\
        prompts: [hi]
        providers: [echo]
        tests:
          - assert:
              - {assertion}
        """
    )
    error = suite_error(path)
    assert message in str(error)
    assert error.line == 5


JUDGE = """\
import json

def call_api(prompt, options, context):
    verdict = "Shall I refund" in prompt or "welcome" in prompt
    return {"output": json.dumps({"pass": verdict, "score": float(verdict), "reason": "read"})}
"""


def test_a_judge_grades_each_answer_and_the_conversation(write_suite):
    path = write_suite(
        SUITE.format(
            asserts="""\
      - {type: llm-rubric, value: "asks before acting", turn: each, provider: file://judge.py}
      - {type: llm-rubric, value: "asks before acting", provider: file://judge.py}
"""
        ),
        {"agent.py": AGENT, "judge.py": JUDGE},
    )
    (record,) = run_evaluation(
        load_suite(path), RunOptions(use_store=False, progress=False)
    ).records
    each, whole = record.grade.component_results
    assert not each.passed and each.reason.startswith("turn 2: ")  # "Refunded" alone fails
    assert whole.passed  # the transcript holds the question
