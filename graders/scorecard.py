"""The scorecard of the agents book's chapter 10: per-layer scores, per-case minimums and
the combined score of a run.

Each assertion of a case belongs to one layer: ``final`` (the answer: output assertions,
judges, the verifier), ``trajectory`` (``trajectory:*``, tool-call checks), ``policy``
(``policy``, ``permission``, ``guardrails``), ``operational`` (``budget``, ``cost``,
``latency``) or ``trace`` (``trace-completeness``, ``trace-complete``, ``trace-*``). An
assertion whose ``metric`` is a layer name belongs to that layer instead. A layer's score is
the weighted mean of its assertions' scores in the run.

A case's ``metadata.min_scores`` (``{final: 0.85, trajectory: 0.90, trace: 0.95}``) makes
each named layer pass when its score reaches the minimum, in place of promptfoo's "every
assertion passes" for that layer; the other layers' assertions must pass as usual.

The combined score is

    S(r) = w_y·S_y + w_τ·S_τ + w_p·S_p + w_o·S_o (+ w_t·S_t) − λ·C_n − μ·L_n

with the weights normalized over the layers the case grades, C_n the run's cost over
``max_cost`` and L_n its latency over ``max_latency_ms`` (each capped at 1; 0 when no
limit is known). It is reported, and with ``min_score`` it is one more condition to pass.
No weight can compensate a permissions failure: a policy violation fails the run whatever
S is.

The suite's top-level ``scorecard:`` block sets ``weights`` (by layer; default 0.25 for
final, trajectory, policy and operational, 0 for trace), ``cost_penalty`` (λ, default 0.1),
``latency_penalty`` (μ, default 0.1), ``max_cost`` and ``max_latency_ms`` (default: the
suite's ``budget:`` limits), ``min_scores`` (defaults for every case) and ``min_score``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from evals.graders.base import GraderError
from evals.graders.catalog import LAYERS
from evals.graders.registry import declaration
from evals.model.results import Grade
from evals.model.suite import Assertion

DEFAULT_WEIGHTS = {"final": 0.25, "trajectory": 0.25, "policy": 0.25, "operational": 0.25}
COST_PENALTY = 0.1
LATENCY_PENALTY = 0.1
OPTIONS = {
    "weights",
    "cost_penalty",
    "latency_penalty",
    "max_cost",
    "max_latency_ms",
    "min_scores",
    "min_score",
}


@dataclass(frozen=True, slots=True)
class ScorecardConfig:
    """A suite's scorecard settings (see the module docstring for each one's default)."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    cost_penalty: float = COST_PENALTY
    latency_penalty: float = LATENCY_PENALTY
    max_cost: float | None = None
    max_latency_ms: float | None = None
    min_scores: dict[str, float] = field(default_factory=dict)
    min_score: float | None = None


@dataclass(frozen=True, slots=True)
class RunScorecard:
    """One run's layer scores, normalized cost and latency, combined score and failures."""

    layers: dict[str, float]
    cost_n: float | None
    latency_n: float
    score: float
    failures: tuple[str, ...]
    trace_missing: int | None = None
    trace_expected: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form reports and the store keep."""
        data: dict[str, Any] = {
            "layers": dict(self.layers),
            "cost_n": self.cost_n,
            "latency_n": self.latency_n,
            "score": self.score,
            "failures": list(self.failures),
        }
        if self.trace_expected is not None:
            data["trace_missing"] = self.trace_missing
            data["trace_expected"] = self.trace_expected
        return data


def layer_of(assertion: Assertion) -> str:
    """The layer an assertion's score counts in: its ``metric`` when that names a layer,
    else the layer its type's grader declares (``@register(..., layer=...)``); a type
    without a grader (``max-score``, ``select-best``, an unknown type's error) is about
    the answer."""
    if assertion.metric in LAYERS:
        return str(assertion.metric)
    declared = declaration(assertion.base_type)
    return "final" if declared is None else declared.layer


def _fraction(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise GraderError(f"{what} must be a number between 0 and 1, got {value!r}")
    return float(value)


def _positive(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise GraderError(f"{what} must be a positive number, got {value!r}")
    return float(value)


def _layer_map(value: Any, what: str) -> dict[str, float]:
    if not isinstance(value, dict):
        raise GraderError(f"{what} must map layers ({', '.join(LAYERS)}) to numbers")
    unknown = sorted(str(k) for k in value if k not in LAYERS)
    if unknown:
        raise GraderError(f"{what}: unknown layer(s) {unknown}; layers: {', '.join(LAYERS)}")
    return {str(k): _fraction(v, f"{what}.{k}") for k, v in value.items()}


def parse_min_scores(value: Any) -> dict[str, float]:
    """A case's ``min_scores`` mapping, checked: layer names and numbers in [0, 1]."""
    return _layer_map(value, "min_scores")


def parse_scorecard(value: Any, budget: Any = None) -> ScorecardConfig:
    """The ``scorecard:`` block with defaults, the limits falling back on ``budget:``."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise GraderError("scorecard must be a mapping of options")
    unknown = sorted(set(value) - OPTIONS)
    if unknown:
        raise GraderError(f"scorecard: unknown option(s) {unknown}; known: {sorted(OPTIONS)}")
    weights = dict(DEFAULT_WEIGHTS)
    if "weights" in value:
        weights = {layer: 0.0 for layer in LAYERS} | _layer_map(value["weights"], "weights")
    if not any(weights.values()):
        raise GraderError("scorecard: at least one layer weight must be positive")
    limits = budget if isinstance(budget, dict) else {}
    min_score = value.get("min_score")
    return ScorecardConfig(
        weights=weights,
        cost_penalty=_fraction(value.get("cost_penalty", COST_PENALTY), "cost_penalty"),
        latency_penalty=_fraction(value.get("latency_penalty", LATENCY_PENALTY), "latency_penalty"),
        max_cost=_positive(value.get("max_cost", limits.get("max_cost")), "max_cost"),
        max_latency_ms=_positive(
            value.get("max_latency_ms", limits.get("max_latency_ms")), "max_latency_ms"
        ),
        min_scores=parse_min_scores(value.get("min_scores") or {}),
        min_score=None if min_score is None else _fraction(min_score, "min_score"),
    )


def scorecard_enabled(suite_config: dict[str, Any], case_metadata: dict[str, Any]) -> bool:
    """A run gets a scorecard when the suite has a ``scorecard:`` block or the case sets
    ``min_scores``; other suites grade exactly as promptfoo does."""
    return "scorecard" in suite_config or "min_scores" in case_metadata


def _weighted_mean(pairs: list[tuple[float, float]]) -> float:
    weight = sum(w for _, w in pairs)
    if weight > 0:
        return sum(score * w for score, w in pairs) / weight
    return sum(score for score, _ in pairs) / len(pairs)


def layer_scores(grades: list[tuple[Assertion, Grade]]) -> dict[str, float]:
    """Each graded layer's weighted mean score (a layer whose weights sum to 0: plain mean)."""
    grouped: dict[str, list[tuple[float, float]]] = {}
    for assertion, grade in grades:
        grouped.setdefault(layer_of(assertion), []).append((grade.score, assertion.weight))
    return {layer: _weighted_mean(grouped[layer]) for layer in LAYERS if layer in grouped}


def combined_score(
    layers: dict[str, float],
    weights: dict[str, float],
    penalties: tuple[float, float],
    cost_n: float | None,
    latency_n: float,
) -> float:
    """S(r): the weighted mean of the graded layers minus λ·C_n and μ·L_n (no cost penalty
    when the run's cost is unknown, `cost_n` None: the card says so rather than count 0)."""
    used = {layer: weights.get(layer, 0.0) for layer in layers if weights.get(layer, 0.0) > 0}
    total = sum(used.values())
    quality = sum(layers[layer] * w for layer, w in used.items()) / total if total else 0.0
    return quality - penalties[0] * (cost_n or 0.0) - penalties[1] * latency_n


def _normalized(value: float, limit: float | None) -> float:
    return 0.0 if limit is None else min(max(value, 0.0) / limit, 1.0)


def score_run(
    grades: list[tuple[Assertion, Grade]],
    config: ScorecardConfig,
    min_scores: dict[str, float],
    cost: float | None,
    latency_ms: float,
) -> RunScorecard:
    """The run's scorecard: layer scores, S(r), and which minimums it missed. A cost that
    is unknown (None: a model without a price) under a `max_cost` leaves C_n unknown."""
    layers = layer_scores(grades)
    cost_n = (
        None
        if cost is None and config.max_cost is not None
        else _normalized(cost or 0.0, config.max_cost)
    )
    latency_n = _normalized(latency_ms, config.max_latency_ms)
    penalties = (config.cost_penalty, config.latency_penalty)
    score = combined_score(layers, config.weights, penalties, cost_n, latency_n)
    failures = [
        f"{layer} {layers[layer]:.3g} < {minimum:g}"
        for layer, minimum in min_scores.items()
        if layer in layers and layers[layer] < minimum
    ]
    if config.min_score is not None and score < config.min_score:
        failures.append(f"score {score:.3g} < {config.min_score:g}")
    traced = next((g.metadata for _, g in grades if "trace_expected" in g.metadata), None)
    return RunScorecard(
        layers,
        cost_n,
        latency_n,
        round(score, 6),
        tuple(failures),
        None if traced is None else len(traced["trace_notes"]),
        None if traced is None else int(traced["trace_expected"]),
    )


def apply_scorecard(
    grade: Grade,
    grades: list[tuple[Assertion, Grade]],
    config: ScorecardConfig,
    case_min_scores: dict[str, float],
    cost: float | None,
    latency_ms: float,
    threshold_decides: bool = False,
    robustness: dict[str, bool | None] | None = None,
) -> Grade:
    """The test's grade decided by the scorecard: the layers with a minimum pass by it, the
        others by their assertions (or, when the case has a ``threshold``, by promptfoo's
        aggregate score); a policy violation fails the run whatever the scores. `robustness`
    (evals.graders.robustness) is kept with the run's scorecard for the reports."""
    min_scores = {**config.min_scores, **case_min_scores}
    card = score_run(grades, config, min_scores, cost, latency_ms)
    others = (
        []
        if threshold_decides
        else [(a, g) for a, g in grades if layer_of(a) not in min_scores and not g.passed]
    )
    aggregate_ok = grade.passed or not threshold_decides
    passed = aggregate_ok and not others and not card.failures and not grade.policy_violation
    if grade.policy_violation or not aggregate_ok:
        reason = grade.reason
    elif others:
        reason = others[0][1].reason
    elif card.failures:
        reason = "Scorecard: " + "; ".join(card.failures)
    else:
        reason = "Scorecard passed"
    summary = card.to_dict()
    if robustness is not None:
        summary["robustness"] = robustness
    metadata = {**grade.metadata, "scorecard": summary}
    return dataclasses.replace(grade, passed=passed, reason=reason, metadata=metadata)
