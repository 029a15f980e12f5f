"""Decide the suite's gates from its statistics: pass, fail or undetermined.

Every statistical gate decides on evidence at its share of the build's false-failure
budget: the budget (1 - confidence, or a staged run's share for one look) is split
equally among the blocking statistical gates, and inside a gate over several hypotheses
(per-tag gates, P0 cases, agents' error rates) Holm's procedure decides at that share,
so under identical agents the build fails falsely at most the budget of the time
whatever the gates' dependence (the union bound). A gate passes only when its pass
limit at 1 - budget/2 shows the threshold met; a build passes only when every gate
passes, which needs no correction. Anything else is undetermined, and the environment's
`on_undetermined` says whether that fails the build. Policy violations and repeats are
facts, not estimates: they spend nothing, and a single violation fails. The judge gates
gate on the agreement the evaluation measured over the gates' calibration file
(evals.pipeline.calibration). docs/gates.md lists every gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from evals.analysis.comparison import without_cases
from evals.gates.comparative import p0_gate, ratio_gate, regression_gates
from evals.gates.families import (
    Hypothesis,
    Levels,
    gate_result,
    judge_family,
    limits_sentence,
    two_sided_confidence,
)
from evals.gates.rates import cost_per_accepted_gate, error_rate_gate, flake_gate, pass_rate_gates
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.suite import Suite, SuiteOutline
from evals.model.summary import AgentStats, Comparison, GateReport, GateResult, Summary
from evals.model.triage import TriageAction
from evals.stats import alpha_shares

if TYPE_CHECKING:
    from evals.analysis.agreement import Agreement


def check_comparable(fingerprint_a: str, fingerprint_b: str, allow: bool) -> list[str]:
    """Warnings for comparing evaluations of two suite fingerprints.

    Different fingerprints mean the cases, graders or referenced files differ, so a
    difference in pass rate may come from the suite rather than the agent. Raises a
    SuiteError unless `allow` (gates.allow_fingerprint_mismatch or a command-line flag).
    """
    if fingerprint_a == fingerprint_b:
        return []
    if not allow:
        raise SuiteError(
            f"the evaluations ran different suite contents (fingerprint {fingerprint_a[:12]} "
            f"vs {fingerprint_b[:12]}); their pass rates are not comparable",
            fix="re-run both agents on the same suite, or set "
            "gates.allow_fingerprint_mismatch: true to compare anyway",
        )
    return [
        f"suite fingerprints differ ({fingerprint_a[:12]} vs {fingerprint_b[:12]}): "
        "differences may come from the suite, not the agent"
    ]


@dataclass(frozen=True, slots=True)
class _Check:
    """One gate (or one family of gates) to decide; statistical ones share the budget."""

    statistical: bool
    decide: Callable[[Levels], list[GateResult]]


def _subject(summary: Summary, config: GateConfig) -> AgentStats | None:
    agents = {a.agent: a for a in summary.agents if a.group == "suite"}
    if config.candidate in agents:
        return agents[config.candidate]
    return summary.agents[0] if len(summary.agents) == 1 else None


def _tag_config(config: GateConfig, tag: str) -> GateConfig:
    known = set(GateConfig.__dataclass_fields__)
    overrides = {k: v for k, v in (config.per_tag.get(tag) or {}).items() if k in known}
    return replace(config, **overrides)


def _tolerance(config: GateConfig) -> float:
    return config.max_regression if config.max_regression is not None else config.margin


def _rate_checks(summary: Summary, config: GateConfig, subject: AgentStats | None) -> list[_Check]:
    checks: list[_Check] = []
    if subject is None:
        return checks
    if config.min_pass_rate is not None:
        checks.append(
            _Check(
                True,
                partial(pass_rate_gates, ["min_pass_rate"], [subject], [config.min_pass_rate]),
            )
        )
    tag_stats = {t.group: t for t in summary.tags if t.agent == subject.agent}
    gated = [t for t in sorted(config.per_tag) if t in tag_stats]
    with_minimum = [t for t in gated if "min_pass_rate" in config.per_tag[t]]
    if with_minimum:
        checks.append(
            _Check(
                True,
                partial(
                    pass_rate_gates,
                    [f"min_pass_rate[{t}]" for t in with_minimum],
                    [tag_stats[t] for t in with_minimum],
                    [float(config.per_tag[t]["min_pass_rate"]) for t in with_minimum],
                ),
            )
        )
    if config.max_error_rate is not None:
        compared = [subject]
        baseline = next(
            (a for a in summary.agents if a.agent == config.baseline and a is not subject), None
        )
        if summary.comparison is not None and baseline is not None:
            compared.append(baseline)
        checks.append(_Check(True, _single(error_rate_gate, compared, config.max_error_rate)))
    if config.max_flake_rate is not None:
        checks.append(
            _Check(True, _single(flake_gate, subject, summary.case_stats, config.max_flake_rate))
        )
    if config.max_cost_per_accepted is not None:
        checks.append(
            _Check(True, _single(cost_per_accepted_gate, subject, config.max_cost_per_accepted))
        )
    if config.min_repeats > 1:
        checks.append(_Check(False, lambda _: [_repeats_gate(summary, subject, config)]))
    return checks


def _comparison_checks(
    summary: Summary, comparison: Comparison | None, config: GateConfig
) -> list[_Check]:
    if comparison is None:
        return []
    checks = [
        _Check(
            True,
            partial(regression_gates, ["regression"], [comparison.overall], [_tolerance(config)]),
        )
    ]
    tags = {t.group: t for t in comparison.tags}
    gated = [
        t
        for t in sorted(config.per_tag)
        if t in tags and {"max_regression", "margin"} & set(config.per_tag[t])
    ]
    if gated:
        checks.append(
            _Check(
                True,
                partial(
                    regression_gates,
                    [f"regression[{t}]" for t in gated],
                    [tags[t] for t in gated],
                    [_tolerance(_tag_config(config, t)) for t in gated],
                ),
            )
        )
    if config.block_p0_regressions:
        has_p0 = any(c.priority == "P0" and c.difference is not None for c in comparison.cases)
        checks.append(_Check(has_p0, _single(p0_gate, comparison, config)))
    for name, what, ratio, log_se, threshold in (
        (
            "cost_ratio",
            "mean cost per run",
            comparison.cost_ratio,
            comparison.cost_ratio_log_se,
            config.max_cost_ratio,
        ),
        (
            "latency_ratio",
            f"p95 latency ({summary.latency_source})",
            comparison.latency_ratio,
            comparison.latency_ratio_log_se,
            config.max_latency_ratio,
        ),
    ):
        if threshold is not None:
            checks.append(_Check(True, _single(ratio_gate, name, what, ratio, log_se, threshold)))
    return checks


def _single(
    gate: Callable[..., GateResult], *arguments: Any
) -> Callable[[Levels], list[GateResult]]:
    """A gate deciding one row, called with its arguments and then the levels."""
    return lambda levels: [gate(*arguments, levels)]


def _policy_gate(summary: Summary, subject: AgentStats | None) -> GateResult:
    agents = [subject] if subject is not None else [a for a in summary.agents if a.group == "suite"]
    count = sum(a.policy_violations for a in agents)
    names = ", ".join(a.agent for a in agents)
    reason = (
        f"{count} policy violation(s) by {names}; a violation is never compensated by scores"
        if count
        else f"no policy violations by {names}"
    )
    return GateResult("policy", "fail" if count else "pass", 0, count, None, reason)


def _repeats_gate(summary: Summary, subject: AgentStats, config: GateConfig) -> GateResult:
    minimum = config.min_repeats
    short = [
        c.case_id for c in summary.case_stats if c.agent == subject.agent and c.counted < minimum
    ]
    reason = (
        f"{len(short)} case(s) have fewer than {minimum} counted runs: insufficient data"
        if short
        else f"every case has at least {minimum} counted runs"
    )
    return GateResult(
        "min_repeats", "undetermined" if short else "pass", minimum, len(short), None, reason
    )


def _agreement_limit(
    estimate: Callable[[float], tuple[float, float, float]], level: float, side: str
) -> float:
    _, low, high = estimate(two_sided_confidence(level))
    return low if side == "lower" else high


def _judge_gate(
    name: str, what: str, judged: Agreement, threshold: float, levels: Levels
) -> GateResult:
    estimate = judged.kappa if what == "kappa" else judged.accuracy
    value = estimate(0.95)[0]
    counts = f"{judged.agreed} of {judged.n} calibration items agreed"
    if judged.errors:
        counts += f", {judged.errors} not graded"
    if judged.n == 0 or value != value:
        reason = f"judge {what} is undefined ({counts}); label items of both verdicts"
        return GateResult(name, "undetermined", threshold, None, None, reason)
    hypothesis = Hypothesis(
        label=name, measured=value, limit=partial(_agreement_limit, estimate), threshold=threshold
    )
    (decided,) = judge_family([hypothesis], levels)
    reason = f"judge {what} {value:.3f} ({counts}): " + limits_sentence(
        decided, lambda v: f"{v:.3f}"
    )
    return gate_result(name, decided, levels, reason)


def _judge_checks(config: GateConfig, judge: Agreement | None) -> list[_Check]:
    if judge is None:
        return []
    checks = []
    for name, what, threshold in (
        ("judge_kappa", "kappa", config.min_judge_kappa),
        ("judge_accuracy", "accuracy", config.min_judge_accuracy),
    ):
        if threshold is not None:
            checks.append(_Check(True, _single(_judge_gate, name, what, judge, threshold)))
    return checks


def in_force(
    quarantines: Sequence[TriageAction], environment: str | None, now: float
) -> list[TriageAction]:
    """The quarantines that hold in `environment` at `now`, one per case (the longest)."""
    chosen: dict[str, TriageAction] = {}
    for action in quarantines:
        if action.kind != "quarantine" or action.case_id is None:
            continue
        if not (action.applies_to(environment) and action.is_active(now)):
            continue
        known = chosen.get(action.case_id)
        if known is None or (known.until or 0.0) < (action.until or 0.0):
            chosen[action.case_id] = action
    return [chosen[case_id] for case_id in sorted(chosen)]


def _quarantine_note(gates: list[GateResult], quarantined: list[str]) -> list[GateResult]:
    """The comparative gates' reasons name the quarantined cases they left out."""
    if not quarantined:
        return gates
    shown = ", ".join(quarantined[:5]) + (", ..." if len(quarantined) > 5 else "")
    note = f"; {len(quarantined)} quarantined case(s) left out: {shown}"
    return [
        replace(g, reason=g.reason + note)
        if g.name == "p0_regressions" or g.name.startswith("regression")
        else g
        for g in gates
    ]


def decide(
    summary: Summary,
    config: GateConfig,
    environment: str | None,
    judge: Agreement | None = None,
    spend: float | None = None,
    quarantines: Sequence[TriageAction] = (),
    now: float | None = None,
) -> GateReport:
    """Every configured gate's decision, with its threshold, limits, levels and reason.

    `config` is applied for `environment`. `spend` is the build's false-failure budget
    for this decision (default 1 - confidence; a staged run passes each look's share).
    `judge` is `measure_judge`'s result; without it the judge gates are not decided.
    `quarantines` are triage actions; those in force in `environment` at `now` (needed
    with them) on cases of the summary take their cases out of the regression and P0
    gates, which then decide over the other cases. A quarantined case is still in the
    summary with its interval; the report lists the quarantines. An expired quarantine
    is not in force: its case blocks again.
    """
    if quarantines and now is None:
        raise ValueError("deciding with quarantines needs the time they are judged at")
    config = config.for_environment(environment)
    budget = 1 - config.confidence if spend is None else spend
    subject = _subject(summary, config)
    measured = {c.case_id for c in summary.case_stats}
    held = [q for q in in_force(quarantines, environment, now or 0.0) if q.case_id in measured]
    quarantined = [q.case_id for q in held if q.case_id is not None]
    compared = summary.comparison
    if compared is not None and quarantined:
        compared = without_cases(compared, quarantined, config)
    checks = [
        *_rate_checks(summary, config, subject),
        *_comparison_checks(summary, compared, config),
        *_judge_checks(config, judge),
    ]
    if config.zero_policy_violations:
        checks.append(_Check(False, lambda _: [_policy_gate(summary, subject)]))
    statistical = [check for check in checks if check.statistical]
    shares = iter(alpha_shares(budget, [1.0] * len(statistical)) if statistical else ())
    gates = []
    for check in checks:
        share = next(shares) if check.statistical else budget
        gates += check.decide(Levels(share=share, pass_alpha=budget / 2, spend=budget))
    comparison = summary.comparison
    return GateReport(
        gates=_quarantine_note(gates, quarantined),
        environment=environment,
        warnings=list(comparison.warnings) if comparison is not None else [],
        on_undetermined=config.on_undetermined or "warn",
        spend=budget,
        config=config.to_dict(),
        quarantines=held,
        decided_at=now,
    )


def planned_gate_count(
    suite: Suite | SuiteOutline, environment: str | None, config: GateConfig | None = None
) -> int:
    """How many blocking statistical gates share the budget in `environment` when every
    case the environment selects runs for both agents: the count `decide` reaches on such
    data, for planning before any run (at least 1). `config` is the environment's gate
    configuration when the caller changed it (a comparison names its two sides)."""
    config = config or (suite.gates or GateConfig()).for_environment(environment)
    cases = [c for c in suite.cases if not config.tags or set(c.tags) & set(config.tags)]
    tags = {tag for case in cases for tag in case.tags}
    compared = config.baseline is not None and config.candidate is not None

    def per_tag(keys: set[str]) -> bool:
        return any(tag in tags and keys & set(values) for tag, values in config.per_tag.items())

    own = (
        config.min_pass_rate,
        config.max_error_rate,
        config.max_flake_rate,
        config.max_cost_per_accepted,
    )
    count = sum(value is not None for value in own) + per_tag({"min_pass_rate"})
    if compared:
        count += 1 + per_tag({"max_regression", "margin"})
        count += config.block_p0_regressions and any(c.priority == "P0" for c in cases)
        count += (config.max_cost_ratio is not None) + (config.max_latency_ratio is not None)
    if config.judge_calibration:
        count += (config.min_judge_kappa is not None) + (config.min_judge_accuracy is not None)
    return max(int(count), 1)


def planned_test_split(
    suite: Suite | SuiteOutline, environment: str | None, config: GateConfig | None = None
) -> int:
    """Into how many one-sided tests a look's budget is split at the finest: the planned
    gates times the largest Holm family among them (the tags of the per-tag gates, the P0
    cases), and at least 2 (the pass side spends half of it).

    A sequential design whose boundaries are computed at the budget over this split is
    exact for the finest test and conservative for every coarser one
    (`evals.pipeline.adaptive.AdaptiveDesign.spends`)."""
    config = config or (suite.gates or GateConfig()).for_environment(environment)
    cases = [c for c in suite.cases if not config.tags or set(c.tags) & set(config.tags)]
    tags = {tag for case in cases for tag in case.tags}

    def tagged(keys: set[str]) -> int:
        return sum(tag in tags and bool(keys & set(v)) for tag, v in config.per_tag.items())

    compared = config.baseline is not None and config.candidate is not None
    families = [tagged({"min_pass_rate"})]
    if compared:
        families.append(tagged({"max_regression", "margin"}))
        if config.block_p0_regressions:
            families.append(sum(c.priority == "P0" for c in cases))
    return max(planned_gate_count(suite, environment, config) * max(1, *families), 2)
