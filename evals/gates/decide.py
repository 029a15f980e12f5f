"""Decide the suite's gates from its statistics: pass, fail or undetermined.

A gate fails only when its interval lies wholly on the wrong side of the threshold and
passes only when it lies wholly on the right side; in between the data cannot tell, and
the gate says so ("undetermined") instead of guessing. Policy violations are the
exception: a single one fails, whatever the rates. docs/gates.md lists every gate.
The judge gates are the one input measured outside the statistics: the evaluation measures
the suite's judge over the gates' calibration file (evals.pipeline.calibration) and
`decide` gates on that agreement.
"""

from __future__ import annotations

import math
from dataclasses import fields

from evals.analysis.agreement import Agreement
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.summary import (
    AgentStats,
    GateReport,
    GateResult,
    GateStatus,
    GroupComparison,
    Interval,
    Summary,
)
from evals.stats import wilson_interval


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


def _interval_status(interval: Interval, threshold: float, higher_is_better: bool) -> GateStatus:
    low, high = interval
    if higher_is_better:
        return "pass" if low >= threshold else "fail" if high < threshold else "undetermined"
    return "pass" if high <= threshold else "fail" if low > threshold else "undetermined"


def _fmt(interval: Interval | None) -> str:
    return f"[{interval[0]:.3g}, {interval[1]:.3g}]" if interval else "(no interval)"


def _subject(summary: Summary, config: GateConfig) -> AgentStats | None:
    agents = {a.agent: a for a in summary.agents}
    if config.candidate in agents:
        return agents[config.candidate]
    return summary.agents[0] if len(summary.agents) == 1 else None


def _absolute(name: str, stats: AgentStats, threshold: float) -> GateResult:
    if stats.interval is None or stats.pass_rate is None:
        return GateResult(
            name, "undetermined", threshold, None, None, f"{stats.agent} has no graded runs"
        )
    measured = (
        f"{stats.agent} pass rate {stats.pass_rate:.3f} {_fmt(stats.interval)} over "
        f"{stats.cases} cases"
    )
    return _at_least(name, threshold, stats.pass_rate, stats.interval, measured)


def _at_least(
    name: str, threshold: float, value: float, interval: Interval, measured: str
) -> GateResult:
    """A minimum gate: it passes when the whole interval around `value` is at or above
    `threshold`; `measured` says what was measured, for the reason."""
    status = _interval_status(interval, threshold, higher_is_better=True)
    explain = {
        "pass": "the whole interval is at or above",
        "fail": "the whole interval is below",
        "undetermined": "the interval straddles",
    }[status]
    reason = f"{measured}: {explain} the minimum {threshold:.3f}"
    return GateResult(name, status, threshold, value, interval, reason)


def _regression(name: str, comparison_group: GroupComparison, tolerance: float) -> GateResult:
    interval = comparison_group.interval
    if interval is None:
        return GateResult(
            name, "undetermined", -tolerance, None, None, comparison_group.explanation
        )
    status = _interval_status(interval, -tolerance, higher_is_better=True)
    explain = {
        "pass": "no loss beyond the tolerance is plausible",
        "fail": "a loss beyond the tolerance is established",
        "undetermined": "the interval allows a loss beyond the tolerance but does not show it",
    }[status]
    return GateResult(
        name,
        status,
        -tolerance,
        comparison_group.difference,
        interval,
        f"{comparison_group.explanation}; tolerated loss {tolerance:.3f}: {explain}",
    )


def _tag_overrides(config: GateConfig, tag: str) -> GateConfig:
    merged = GateConfig(**{f.name: getattr(config, f.name) for f in fields(GateConfig)})
    known = {f.name for f in fields(GateConfig)}
    for key, value in (config.per_tag.get(tag) or {}).items():
        if key in known:
            setattr(merged, key, value)
    return merged


def _rate_gates(summary: Summary, config: GateConfig, gates: list[GateResult]) -> None:
    subject = _subject(summary, config)
    if subject is not None and config.min_pass_rate is not None:
        gates.append(_absolute("min_pass_rate", subject, config.min_pass_rate))
    tag_stats = {t.group: t for t in summary.tags if subject and t.agent == subject.agent}
    comparison = summary.comparison
    tag_comparisons = {t.group: t for t in comparison.tags} if comparison else {}
    for tag in sorted(config.per_tag):
        tag_config = _tag_overrides(config, tag)
        threshold = tag_config.min_pass_rate
        if tag in tag_stats and "min_pass_rate" in config.per_tag[tag] and threshold is not None:
            gates.append(_absolute(f"min_pass_rate[{tag}]", tag_stats[tag], threshold))
        if tag in tag_comparisons and {"max_regression", "margin"} & set(config.per_tag[tag]):
            gates.append(
                _regression(f"regression[{tag}]", tag_comparisons[tag], _tolerance(tag_config))
            )
    if comparison is not None:
        gates.append(_regression("regression", comparison.overall, _tolerance(config)))


def _tolerance(config: GateConfig) -> float:
    return config.max_regression if config.max_regression is not None else config.margin


def _priority_gate(summary: Summary) -> GateResult:
    assert summary.comparison is not None
    regressed = [
        c.case_id
        for c in summary.comparison.cases
        if c.priority == "P0" and c.verdict == "regression"
    ]
    checked = sum(1 for c in summary.comparison.cases if c.priority == "P0")
    if regressed:
        reason = f"P0 case(s) regressed significantly after correction: {', '.join(regressed)}"
    else:
        reason = f"no significant regression among {checked} P0 case(s)"
    return GateResult(
        "p0_regressions", "fail" if regressed else "pass", 0, len(regressed), None, reason
    )


def _policy_gate(summary: Summary, subject: AgentStats | None) -> GateResult:
    agents = [subject] if subject is not None else summary.agents
    count = sum(a.policy_violations for a in agents)
    names = ", ".join(a.agent for a in agents)
    reason = (
        f"{count} policy violation(s) by {names}; a violation is never compensated by scores"
        if count
        else f"no policy violations by {names}"
    )
    return GateResult("policy", "fail" if count else "pass", 0, count, None, reason)


def _flake_gate(summary: Summary, subject: AgentStats, threshold: float) -> GateResult:
    flakes = [
        c.flake for c in summary.case_stats if c.agent == subject.agent and c.flake is not None
    ]
    if not flakes:
        return GateResult(
            "flake_rate",
            "undetermined",
            threshold,
            None,
            None,
            "no case has two graded runs, so flakiness cannot be observed",
        )
    flaky = sum(1 for f in flakes if f > 0)
    measured = flaky / len(flakes)
    interval = wilson_interval(flaky, len(flakes), summary.confidence)
    if interval[0] > threshold:
        status: GateStatus = "fail"
    elif measured <= threshold:
        status = "pass"
    else:
        status = "undetermined"
    return GateResult(
        "flake_rate",
        status,
        threshold,
        measured,
        interval,
        f"{flaky} of {len(flakes)} cases both passed and failed ({measured:.1%}, "
        f"{_fmt(interval)}); allowed {threshold:.1%}",
    )


def _ratio_gate(
    name: str, what: str, ratio: float | None, interval: Interval | None, threshold: float
) -> GateResult:
    if ratio is None or interval is None:
        return GateResult(
            name, "undetermined", threshold, ratio, None, f"no {what} ratio could be estimated"
        )
    status = _interval_status(interval, threshold, higher_is_better=False)
    return GateResult(
        name,
        status,
        threshold,
        ratio,
        interval,
        f"candidate/baseline {what} {ratio:.2f}x {_fmt(interval)}; allowed {threshold:.2f}x",
    )


def _cost_per_accepted_gate(subject: AgentStats, threshold: float) -> GateResult:
    value, interval = subject.cost_per_accepted, subject.cost_per_accepted_interval
    if value is None:
        status: GateStatus = "fail" if subject.total_cost > 0 else "undetermined"
        return GateResult(
            "cost_per_accepted",
            status,
            threshold,
            None,
            None,
            f"{subject.agent} had no accepted run, spending {subject.total_cost:.4g}",
        )
    if interval is None:
        status = "pass" if value <= threshold else "fail"
    else:
        status = _interval_status(interval, threshold, higher_is_better=False)
    return GateResult(
        "cost_per_accepted",
        status,
        threshold,
        value,
        interval,
        f"{subject.agent} spent {value:.4g} per accepted run {_fmt(interval)}; "
        f"allowed {threshold:.4g}",
    )


def _repeats_gate(summary: Summary, subject: AgentStats, minimum: int) -> GateResult:
    short = [
        c.case_id
        for c in summary.case_stats
        if c.agent == subject.agent and c.passes + c.fails < minimum
    ]
    reason = (
        f"{len(short)} case(s) have fewer than {minimum} graded runs: insufficient data"
        if short
        else f"every case has at least {minimum} graded runs"
    )
    return GateResult(
        "min_repeats", "undetermined" if short else "pass", minimum, len(short), None, reason
    )


def _judge_gate(
    name: str, what: str, estimate: tuple[float, float, float], threshold: float, judged: Agreement
) -> GateResult:
    value, low, high = estimate
    counts = f"{judged.agreed} of {judged.n} calibration items agreed"
    if judged.errors:
        counts += f", {judged.errors} not graded"
    if judged.n == 0 or math.isnan(value):
        reason = f"judge {what} is undefined ({counts}); label items of both verdicts"
        return GateResult(name, "undetermined", threshold, None, None, reason)
    measured = f"judge {what} {value:.3f} {_fmt((low, high))} ({counts})"
    return _at_least(name, threshold, value, (low, high), measured)


def _judge_gates(config: GateConfig, judged: Agreement, confidence: float) -> list[GateResult]:
    gates = []
    if config.min_judge_kappa is not None:
        kappa = judged.kappa(confidence)
        gates.append(_judge_gate("judge_kappa", "kappa", kappa, config.min_judge_kappa, judged))
    if config.min_judge_accuracy is not None:
        accuracy = judged.accuracy(confidence)
        gates.append(
            _judge_gate("judge_accuracy", "accuracy", accuracy, config.min_judge_accuracy, judged)
        )
    return gates


def decide(
    summary: Summary,
    config: GateConfig,
    environment: str | None,
    judge: Agreement | None = None,
) -> GateReport:
    """Every configured gate's decision, with the threshold, measurement and interval.

    `judge` is `measure_judge`'s result; without it the judge gates are not decided.
    """
    config = config.for_environment(environment)
    gates: list[GateResult] = []
    subject = _subject(summary, config)
    _rate_gates(summary, config, gates)
    comparison = summary.comparison
    if comparison is not None and config.block_p0_regressions:
        gates.append(_priority_gate(summary))
    if config.zero_policy_violations:
        gates.append(_policy_gate(summary, subject))
    if subject is not None:
        if config.max_flake_rate is not None:
            gates.append(_flake_gate(summary, subject, config.max_flake_rate))
        if config.max_cost_per_accepted is not None:
            gates.append(_cost_per_accepted_gate(subject, config.max_cost_per_accepted))
        if config.min_repeats > 1:
            gates.append(_repeats_gate(summary, subject, config.min_repeats))
    if comparison is not None:
        if config.max_cost_ratio is not None:
            gates.append(
                _ratio_gate(
                    "cost_ratio",
                    "mean cost per run",
                    comparison.cost_ratio,
                    comparison.cost_ratio_interval,
                    config.max_cost_ratio,
                )
            )
        if config.max_latency_ratio is not None:
            gates.append(
                _ratio_gate(
                    "latency_ratio",
                    "p95 latency",
                    comparison.latency_ratio,
                    comparison.latency_ratio_interval,
                    config.max_latency_ratio,
                )
            )
    if judge is not None:
        gates.extend(_judge_gates(config, judge, summary.confidence))
    warnings = list(comparison.warnings) if comparison is not None else []
    return GateReport(gates=gates, environment=environment, warnings=warnings)
