"""max-score and select-best verdicts on groups of outputs, and how they merge into a run."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from judge_server import base_url, judge_server

from evals.common.blocking import run_to_completion
from evals.graders.ranking import max_score, merge_group_verdict, select_best
from evals.model.results import AgentResponse, Grade
from evals.model.suite import Assertion, Case


def _assertion(kind: str, value: object = None, **raw: object) -> Assertion:
    return Assertion(type=kind, value=value, raw={"type": kind, "value": value, **raw})


def _run(*components: tuple[str, float]) -> Grade:
    """A run's grade made of components (type, score); it passes when every score is 1."""
    parts = [Grade(s == 1.0, s, "r", {"type": t}) for t, s in components]
    score = sum(s for _, s in components) / len(components)
    return Grade(all(p.passed for p in parts), score, "All assertions passed", None, {}, parts)


scores = st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=1, max_size=3)


@given(st.lists(scores, min_size=2, max_size=6))
def test_max_score_marks_exactly_one_winner_the_first_best(runs: list[list[float]]) -> None:
    grades = [_run(*(("contains", s) for s in run)) for run in runs]
    verdicts = max_score(_assertion("max-score"), grades)
    means = [sum(run) / len(run) for run in runs]
    winners = [i for i, v in enumerate(verdicts) if v.passed]
    assert winners == [means.index(max(means))]
    assert [v.score for v in verdicts] == [1.0 if v.passed else 0.0 for v in verdicts]
    assert [v.named_scores["maxScore"] for v in verdicts] == pytest.approx(means)


@given(st.lists(scores, min_size=2, max_size=6), st.floats(0.0, 1.0))
def test_max_score_threshold_selects_nothing_when_the_best_misses_it(
    runs: list[list[float]], threshold: float
) -> None:
    grades = [_run(*(("contains", s) for s in run)) for run in runs]
    verdicts = max_score(_assertion("max-score", {"threshold": threshold}), grades)
    best = max(sum(run) / len(run) for run in runs)
    assert sum(v.passed for v in verdicts) == (1 if best >= threshold else 0)


def test_max_score_weights_sum_and_reasons() -> None:
    grades = [
        _run(("contains", 1.0), ("icontains", 0.0)),
        _run(("contains", 0.0), ("icontains", 1.0), ("icontains", 1.0)),
    ]
    weighted = max_score(_assertion("max-score", {"weights": {"contains": 3}}), grades)
    assert [v.passed for v in weighted] == [True, False]
    assert weighted[0].reason == "Selected as highest scoring output (score: 0.750)"
    assert weighted[1].reason == "Not selected (score: 0.400, max: 0.750)"
    assert weighted[0].named_scores == {"maxScore": 0.75, "assertionCount": 2, "totalWeight": 4}
    summed = max_score(_assertion("max-score", {"method": "sum"}), grades)
    assert [v.passed for v in summed] == [False, True]
    assert summed[1].named_scores["maxScore"] == 2.0
    high = max_score(_assertion("max-score", {"threshold": 0.9}), grades)
    assert [v.reason for v in high] == [
        "Not selected (score: 0.500, max: 0.667)",
        "Not selected - score 0.667 below threshold 0.9",
    ]


def test_max_score_ignores_other_comparisons_and_needs_another_assertion() -> None:
    best = Grade(False, 0.0, "x", {"type": "select-best"})
    grades = [_run(("contains", 0.0)), _run(("contains", 1.0))]
    grades[0].component_results.append(Grade(True, 1.0, "x", {"type": "select-best"}))
    grades[1].component_results.append(best)
    assert [v.passed for v in max_score(_assertion("max-score"), grades)] == [False, True]
    only = [Grade(True, 0.0, "All assertions passed", None) for _ in range(2)]
    failed = max_score(_assertion("max-score"), only)
    assert all(v.errored and "at least one other assertion" in v.reason for v in failed)
    alone = max_score(_assertion("max-score"), [_run(("contains", 1.0))])
    assert alone[0].errored and "at least two outputs" in alone[0].reason


def test_max_score_counts_an_assert_sets_and_a_scripts_components_one_by_one() -> None:
    """As promptfoo lists them: a set's own result (no assertion) is left out, its checks
    count; a script's returned components count with the script's type; NaN counts 0."""
    inner = [
        Grade(True, 1.0, "r", {"type": "contains"}),
        Grade(False, 0.0, "r", {"type": "equals"}),
    ]
    in_set = Grade(True, 1.0, "set", {"type": "assert-set"}, component_results=inner)
    script = Grade(
        True, 1.0, "s", {"type": "javascript"}, component_results=[Grade(True, 1.0, "i")]
    )
    nan = Grade(False, float("nan"), "n", {"type": "javascript"})
    grades = [
        Grade(True, 0.5, "All assertions passed", None, {}, [in_set, nan]),
        Grade(True, 1.0, "All assertions passed", None, {}, [script]),
    ]
    verdicts = max_score(_assertion("max-score"), grades)
    assert [v.named_scores["assertionCount"] for v in verdicts] == [3, 2]
    assert [round(v.named_scores["maxScore"], 4) for v in verdicts] == [0.3333, 1.0]
    assert [v.passed for v in verdicts] == [False, True]


def test_merge_keeps_a_winner_and_fails_a_loser_as_promptfoo() -> None:
    passing = _run(("contains", 1.0))
    won = Grade(True, 1.0, "Selected", {"type": "max-score"})
    lost = Grade(False, 0.0, "Not selected", {"type": "max-score"})
    assert merge_group_verdict(passing, won).passed
    assert merge_group_verdict(passing, won).score == 1.0
    merged = merge_group_verdict(passing, lost)
    assert (merged.passed, merged.score, merged.reason) == (False, 0.0, "Not selected")
    assert merged.component_results[-1] is lost and len(passing.component_results) == 1
    failing = _run(("contains", 0.5))
    assert merge_group_verdict(failing, lost).reason == "All assertions passed"
    judged = Grade(False, 0.0, "Output not selected: x", {"type": "select-best"})
    assert merge_group_verdict(failing, judged).reason == "Output not selected: x"
    winner = merge_group_verdict(failing, won)
    assert (winner.passed, winner.score) == (False, 0.5)


def _select(server_url: str | None, outputs: list[str], criteria: str, **raw: object):
    provider = raw.pop("provider", None)
    assertion = _assertion("select-best", criteria, **raw)
    assertion.provider = provider
    options = {"provider": {"id": "openai:chat:judge", "config": {"apiBaseUrl": server_url}}}
    return run_to_completion(
        select_best(
            assertion,
            Case(0, "c", "", {}, [assertion], options=options if server_url else {}),
            outputs,
            variables={"topic": "tea"},
            prompt="p",
            response=AgentResponse(output=outputs[0]),
            suite_root=Path("."),
            suite_config={},
        )
    )


def test_select_best_asks_the_grader_provider_for_an_index() -> None:
    with judge_server() as server:
        verdicts = _select(base_url(server), ["mild tea", "spicy tea", "spicy soup"], "be spicy")
        request = server.requests[-1]
    assert [v.passed for v in verdicts] == [False, True, False]
    assert verdicts[1].reason == "Output selected as the best: be spicy"
    assert verdicts[0].reason == "Output not selected: be spicy"
    assert verdicts[1].tokens_used["total"] == 15
    prompt = request["messages"][0]["content"]
    assert '<Text index="2">\nspicy soup\n</Text>' in prompt
    assert "best fits the following criteria: be spicy" in prompt


@pytest.mark.slow
def test_select_best_failures_fail_every_output() -> None:
    with judge_server() as server:
        url = base_url(server)
        unknown = _select(url, ["a", "b"], "sweet")
        custom = _select(url, ["a", "b"], "x", rubricPrompt="Pick: {{ outputs | length }}")
        assert server.requests[-1]["messages"][-1]["content"] == "Pick: 2"
        down = {"id": "openai:chat:down", "config": {"apiBaseUrl": url}}
        failed = _select(url, ["a", "b"], "x", provider=down)
        assert server.requests[-1]["model"] == "down"
    assert all(v.errored and v.reason == "Invalid select-best verdict: NaN" for v in unknown)
    assert [v.reason for v in custom] == ["Invalid select-best verdict: NaN"] * 2
    assert all(not v.passed and v.errored and "500" in v.reason for v in failed)
    assert len(_select(None, ["a"], "x")) == 1
