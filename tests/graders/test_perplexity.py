"""perplexity and perplexity-score: promptfoo's formulas, verdicts, reasons and errors."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from evals.model.results import AgentResponse
from tests.graders.assertion_kit import graded, make_assertion

LOG_PROBS = [-0.1, -0.5, -0.2]


def _grade(kind: str, log_probs: list[float] | None, **extra: object):
    return graded(
        make_assertion(kind, **extra),
        "out",
        AgentResponse(output="out", log_probs=log_probs),
        prompt="p",
        variables={},
        latency_ms=1.0,
        suite_root=Path("."),
    )


def test_perplexity_passes_at_or_below_the_threshold() -> None:
    ppl = math.exp(-sum(LOG_PROBS) / 3)  # about 1.3
    assert _grade("perplexity", LOG_PROBS, threshold=2).passed
    failed = _grade("perplexity", LOG_PROBS, threshold=1.2)
    assert (failed.passed, failed.score) == (False, 0.0)
    assert failed.reason == f"Perplexity {ppl:.2f} is greater than threshold 1.2"


def test_perplexity_score_is_the_logistic_of_the_mean() -> None:
    grade = _grade("perplexity-score", LOG_PROBS, threshold=0.5)
    assert not grade.passed
    assert grade.score == 1 / (1 + math.exp(0.8 / 3))
    assert grade.reason == "Perplexity score 0.43 is less than threshold 0.5"


def test_negations_invert_the_verdict_and_the_score() -> None:
    ppl = _grade("not-perplexity", LOG_PROBS, threshold=2)
    assert not ppl.passed
    assert ppl.reason == "Perplexity 1.31 is less than or equal to threshold 2"
    score = _grade("not-perplexity-score", LOG_PROBS, threshold=0.4)
    assert not score.passed
    assert score.score == 1 - 1 / (1 + math.exp(0.8 / 3))
    assert score.reason == "Perplexity score 0.43 is greater than or equal to threshold 0.4"


def test_without_a_threshold_both_pass() -> None:
    assert _grade("perplexity", [-50.0]).passed
    grade = _grade("perplexity-score", [-50.0])
    assert grade.passed and grade.reason == "Assertion passed"


def test_a_huge_perplexity_is_infinite_not_an_error() -> None:
    grade = _grade("perplexity", [-1000.0], threshold=2)
    assert grade.reason == "Perplexity Infinity is greater than threshold 2"
    assert _grade("perplexity-score", [-1000.0], threshold=0.5).score == 0.0


def test_missing_or_empty_log_probs_make_an_error_row() -> None:
    for log_probs in (None, []):
        grade = _grade("perplexity", log_probs, threshold=2)
        assert grade.errored
        assert grade.reason == (
            "Error: Perplexity assertion does not support providers that do not return logProbs"
        )
    assert _grade("perplexity-score", None).reason.startswith("Error: perplexity-score ")


@given(st.lists(st.floats(min_value=-30, max_value=0), min_size=1, max_size=20))
def test_the_two_scores_agree_on_the_mean(log_probs: list[float]) -> None:
    mean = sum(log_probs) / len(log_probs)
    score = _grade("perplexity-score", log_probs).score
    assert math.isclose(score, 1 / (1 + math.exp(-mean)), rel_tol=1e-9)
    threshold = math.exp(-mean)
    assert _grade("perplexity", log_probs, threshold=threshold * (1 + 1e-9)).passed
    assert not _grade("perplexity", log_probs, threshold=threshold * (1 - 1e-9)).passed
