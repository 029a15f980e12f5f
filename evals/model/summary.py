"""The statistics of an evaluation as data: what `analysis` computes and reports print.

Plain dataclasses with `to_dict`, so the store, the JSON report and the dashboard share
one shape. Intervals are (low, high) tuples at the summary's confidence level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from evals.model.triage import TriageAction


def _json_ready(value: Any) -> Any:
    """A dataclass tree as plain JSON values; orjson walks it several times faster than
    `dataclasses.asdict`, which matters for summaries of thousands of cases."""
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


Interval = tuple[float, float]
Verdict = Literal["regression", "improvement", "equivalent", "inconclusive", "insufficient data"]
GateStatus = Literal["pass", "fail", "undetermined"]


@dataclass(slots=True)
class CaseAgentStats:
    """One agent on one case over its repeats.

    Errored runs count as failed runs in `pass_rate`, except the `excluded` ones (errors of
    a kind the suite's `exclude_errors` leaves out); `counted` is the runs the rate is over.
    """

    case_id: str
    agent: str
    runs: int
    passes: int
    fails: int
    errors: int
    pass_rate: float | None
    interval: Interval | None
    pass_hat_k: float | None = None
    flake: float | None = None
    mean_cost: float | None = None
    mean_latency_ms: float | None = None
    mean_score: float | None = None
    policy_violations: int = 0
    excluded: int = 0
    unknown_cost_runs: int = 0

    @property
    def counted(self) -> int:
        """Runs the pass rate is over: passes, fails and the errors not excluded."""
        return self.passes + self.fails + self.errors - self.excluded


@dataclass(slots=True)
class AgentStats:
    """One agent over a set of cases (the suite, or one tag), the case as the unit.

    `variance` is that of the mean of per-case pass rates (the square of its standard
    error over cases), from which `min_pass_rate` computes its limits at any level;
    `counted` the runs the rates are over. `error_rate` pools every errored run (excluded
    kinds too) over all runs, with a Clopper-Pearson interval; `error_kinds` counts them by
    kind and `first_errors` holds the first message of each kind. `flake_probability` is
    the mean over cases of the chance that two repeats disagree, with its interval.
    Latencies are those `Summary.latency_source` names. Costs are over the runs whose cost
    is known: `unknown_cost_runs` answered runs had none (a model without a price;
    `cost_unknown` says why, with the fix), `total_cost` is None when no run's cost is
    known, and `cost_per_accepted` when any is unknown. `violation_cases` counts the cases
    with a policy violation, and `first_violation` says where the first one (in case and
    repeat order) happened and what it was: the case, the repeat (from 1) and the grade's
    reason, which in a conversation names the turn.
    """

    agent: str
    group: str
    cases: int
    runs: int
    passes: int
    errors: int
    pass_rate: float | None
    interval: Interval | None
    run_pass_rate: float | None = None
    standard_error: float | None = None
    effective_n: float | None = None
    icc: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    total_cost: float | None = 0.0
    cost_per_accepted: float | None = None
    p95_latency_ms: float | None = None
    mean_latency_ms: float | None = None
    policy_violations: int = 0
    k: int | None = None
    cost_per_accepted_interval: Interval | None = None
    cost_per_accepted_se: float | None = None
    p95_latency_interval: Interval | None = None
    variance: float | None = None
    counted: int = 0
    excluded: int = 0
    error_rate: float | None = None
    error_interval: Interval | None = None
    error_kinds: dict[str, int] = field(default_factory=dict)
    first_errors: dict[str, str] = field(default_factory=dict)
    flake_probability: float | None = None
    flake_interval: Interval | None = None
    unknown_cost_runs: int = 0
    cost_unknown: str | None = None
    conditional_runs: float | None = None
    violation_cases: int = 0
    first_violation: str | None = None

    def unknown_cost_note(self) -> str | None:
        """ "cost unknown for N of M runs of AGENT: WHY" (with the fix), None when every
        answered run's cost is known."""
        if not self.unknown_cost_runs:
            return None
        return (
            f"cost unknown for {self.unknown_cost_runs} of {self.runs} runs of {self.agent}: "
            f"{self.cost_unknown}"
        )


@dataclass(slots=True)
class CaseComparison:
    """Candidate against baseline on one case.

    `p_value` is the two-sided exact test of no difference, `p_adjusted` its
    Benjamini-Hochberg q-value across the compared cases, and `interval` the test's
    inversion at `level`, the Benjamini-Yekutieli level at which it excludes 0 exactly
    when q <= 1 - confidence; the verdict reads the interval, and `reason` says why in
    words. `pair` is the paired table (both passed, candidate only, baseline only,
    neither) when the runs pair up.
    """

    case_id: str
    description: str
    tags: list[str]
    priority: str | None
    baseline: CaseAgentStats
    candidate: CaseAgentStats
    difference: float | None
    interval: Interval | None
    p_value: float | None
    p_adjusted: float | None
    verdict: Verdict
    why_it_exists: str | None = None
    paired: bool = False
    level: float | None = None
    reason: str = ""
    pair: tuple[int, int, int, int] | None = None


@dataclass(slots=True)
class GroupComparison:
    """Candidate against baseline over the suite or one tag.

    The difference of mean per-case pass rates over the cases both agents ran. Its
    `estimand` says what it is about: `cases`, these cases (the stratified score test over
    the per-case binomials, `evals.stats.stratified_difference`), or `tasks`, tasks like
    these (a t test on per-case differences with `standard_error` and `df`). `interval`
    inverts the test at `level`: the confidence for the suite, the level of Holm's
    deciding step across tags for a tag (so a tag's interval excludes 0 exactly when its
    Holm-adjusted `p_adjusted` is significant).
    """

    group: str
    cases: int
    baseline_rate: float | None
    candidate_rate: float | None
    difference: float | None
    interval: Interval | None
    verdict: Verdict
    p_value: float | None = None
    p_adjusted: float | None = None
    explanation: str = ""
    correlation: float | None = None
    fixed_suite_interval: Interval | None = None
    level: float | None = None
    standard_error: float | None = None
    df: int | None = None
    estimand: str = "cases"


@dataclass(slots=True)
class Comparison:
    """Everything that says whether the candidate is better or worse than the baseline.

    The cost and latency ratios carry the standard error of their logarithm over the
    paired cluster bootstrap (`*_log_se`); their intervals, here and in the gates, are
    exp(log ratio ± z·SE) at the level each shows.
    """

    baseline: str
    candidate: str
    overall: GroupComparison
    tags: list[GroupComparison]
    cases: list[CaseComparison]
    warnings: list[str] = field(default_factory=list)
    latency_ratio: float | None = None
    latency_ratio_interval: Interval | None = None
    cost_ratio: float | None = None
    cost_ratio_interval: Interval | None = None
    paired_cases: int = 0
    cost_ratio_log_se: float | None = None
    latency_ratio_log_se: float | None = None


@dataclass(slots=True)
class RunShare:
    """How many runs met a condition out of the runs it applies to (rate None when none)."""

    hits: int
    runs: int
    rate: float | None = None

    def __post_init__(self) -> None:
        self.rate = self.hits / self.runs if self.runs else None


@dataclass(slots=True)
class AgentScorecard:
    """One agent's scorecard over an evaluation (the agents book's chapter 10).

    `layers` and `score` are means over the agent's graded runs (a layer over the runs that
    grade it); `min_score_failures` counts runs that missed a layer or combined minimum;
    `missing_span_rate` is missing trace items over expected ones; the robustness shares
    count the runs each question applies to; `timeouts` counts runs cut at the timeout.
    """

    agent: str
    runs: int
    layers: dict[str, float]
    score: float | None
    min_score_failures: int
    missing_span_rate: float | None
    retry_success: RunShare
    fallback_correct: RunShare
    partial_task_handled: RunShare
    timeouts: RunShare


@dataclass(slots=True)
class Summary:
    """Statistics of one evaluation; `latency_source` names the latency every latency
    statistic reads (wall: the harness's clock; agent: the agent's own report)."""

    suite_id: str
    version: str | None
    fingerprint: str
    confidence: float
    case_stats: list[CaseAgentStats]
    agents: list[AgentStats]
    tags: list[AgentStats]
    comparison: Comparison | None
    latency_source: str = "wall"
    scorecards: list[AgentScorecard] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (intervals become lists, as in JSON)."""
        return _json_ready(self)


@dataclass(slots=True)
class GateResult:
    """One gate's decision with the numbers behind it.

    A statistical gate has two one-sided limits: it fails when `fail_limit` (at
    `fail_level`, from its `share` of the build's false-failure budget) lies beyond the
    threshold, and passes when `pass_limit` (at `pass_level`) lies within it. `interval`
    holds the two limits, low first. Gates over several hypotheses (one per tag, one per
    P0 case) hold the `p_value` and Holm-adjusted `adjusted_p` of the one that decided.
    Gates that count facts (policy, repeats) have no share. `about` says what the
    verdict is about ("on these 20 cases", "on tasks like these"); a regression gate's
    `detectable` is the smallest loss this run would have shown beyond its tolerance
    (80 % of the time). A gate decided case by case (P0) holds the `tables` (candidate
    passes, runs, baseline passes, runs) of the cases it left undetermined and the size
    of its Holm `family`, from which an adaptive run tells whether more runs could still
    fail it; a per-tag regression row holds the number of tags its gate's share is split
    over (its first step is `share / family`).
    """

    name: str
    status: GateStatus
    threshold: float | None
    measured: float | None
    interval: Interval | None
    reason: str
    blocking: bool = True
    fail_limit: float | None = None
    fail_level: float | None = None
    pass_limit: float | None = None
    pass_level: float | None = None
    share: float | None = None
    p_value: float | None = None
    adjusted_p: float | None = None
    about: str | None = None
    detectable: float | None = None
    tables: list[tuple[int, int, int, int]] | None = None
    family: int | None = None


@dataclass(frozen=True, slots=True)
class AdaptiveLookRecord:
    """One look of an adaptive run: repeats per case so far, the cases that ran in it,
    the runs so far and the verdict then."""

    look: int
    repeats: int
    cases: int
    runs: int
    verdict: str


@dataclass(frozen=True, slots=True)
class AdaptiveGateRecord:
    """A gate an adaptive run decided (or stopped for futility): at which look, after
    how many runs."""

    name: str
    status: str
    look: int
    runs: int


@dataclass(slots=True)
class AdaptiveSummary:
    """What an adaptive run did: its looks, the gates decided with their look and runs,
    why it stopped, and its runs against the fixed design of `last` repeats of every case."""

    looks: list[AdaptiveLookRecord]
    decided: list[AdaptiveGateRecord]
    stop_reason: str
    last: int
    runs: int
    fixed_runs: int

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AdaptiveSummary:
        """The summary from its stored JSON form (`GateReport.to_dict()["adaptive"]`)."""
        return cls(
            looks=[AdaptiveLookRecord(**look) for look in data["looks"]],
            decided=[AdaptiveGateRecord(**gate) for gate in data["decided"]],
            stop_reason=data["stop_reason"],
            last=data["last"],
            runs=data["runs"],
            fixed_runs=data["fixed_runs"],
        )

    @property
    def saved(self) -> int:
        """Runs saved against the fixed design."""
        return self.fixed_runs - self.runs

    def describe(self) -> str:
        """The looks, why it stopped, the gates with their deciding look, the runs saved."""
        history = ", ".join(
            f"look {look.look} ({look.repeats} repeats, {look.cases} cases, {look.runs} runs): "
            f"{look.verdict}"
            for look in self.looks
        )
        decided = "; ".join(
            f"{g.name} {g.status} at look {g.look} after {g.runs} runs" for g in self.decided
        )
        share = self.saved / self.fixed_runs if self.fixed_runs else 0.0
        return (
            f"adaptive run: {history}; stopped because {self.stop_reason}. Gates decided: "
            f"{decided or 'none'}. {self.runs} runs against {self.fixed_runs} for "
            f"{self.last} repeats of every case: {self.saved} saved ({share:.0%})."
        )


@dataclass(frozen=True, slots=True)
class BaselineReuse:
    """A stored baseline standing in for running the baseline agent again.

    `source` is the stored evaluation whose runs of `agent` (the same agent fingerprint,
    suite and seeds) answered `reused` of the baseline's runs without calling it;
    `guard` runs were re-run fresh for the drift guard, which found the fresh runs'
    mean per-case pass rate `fresh_rate` against `stored_rate` for the stored runs of the
    same cases, with two-sided p-value `p_value` at `level`. `fell_back` says the guard
    saw drift and the baseline ran fresh instead. While stored runs stand in, the gates
    spend `1 - reserve` of the false-failure budget. `calls` are the agent calls the
    evaluation made (the guard's included) and `fixed_calls` those of its most repeats
    of every case with every agent run fresh, once the run is over. `fresh_gates` are the
    gates whose cases the guard re-ran fresh in full (the P0 cases): they compare fresh
    runs only and keep their whole share.
    """

    source: str
    agent: str
    reused: int
    guard: int
    fresh_rate: float
    stored_rate: float
    p_value: float
    level: float
    fell_back: bool
    reserve: float
    calls: int | None = None
    fixed_calls: int | None = None
    fresh_gates: tuple[str, ...] = ()

    def headline(self) -> str:
        """What happened to the baseline, in one line: the stored runs reused and the
        guard's runs re-run fresh with its finding, or the drift that made it run fresh."""
        who = "baseline" if self.agent == "baseline" else f"baseline {self.agent}"
        if self.fell_back:
            return (
                f"{who}: drift found ({self.guard} stored run(s) re-run fresh "
                f"pass {100 * self.fresh_rate:.1f} % against {100 * self.stored_rate:.1f} % "
                f"stored, p = {self.p_value:.3g}): baseline re-run fresh"
            )
        full = " (P0 cases in full)" if "p0_regressions" in self.fresh_gates else ""
        return (
            f"{who}: {self.reused} stored run(s) reused, {self.guard} re-run "
            f"fresh as a drift check{full}: no drift"
        )

    def _fresh_note(self) -> str:
        if not self.fresh_gates:
            return ""
        return f", except {', '.join(self.fresh_gates)}, which compared fresh runs only"

    def calls_line(self) -> str | None:
        """The agent calls made against those of the same repeats with every agent run
        fresh, in one line; None before the run is over."""
        if self.calls is None or not self.fixed_calls:
            return None
        saved = self.fixed_calls - self.calls
        return (
            f"agent calls: {self.calls} against {self.fixed_calls} with every agent run fresh "
            f"({saved} saved, {saved / self.fixed_calls:.0%})"
        )

    def describe(self) -> str:
        """The headline, then where the runs came from, what the guard found and what the
        gates spent, in words."""
        found = (
            f"the drift guard re-ran {self.guard} of its runs fresh: "
            f"{100 * self.fresh_rate:.1f} % against {100 * self.stored_rate:.1f} % stored on "
            f"the same cases (p = {self.p_value:.3g}, two-sided level {self.level:g})"
        )
        calls = self.calls_line()
        tail = f"; {calls}" if calls else ""
        if self.fell_back:
            return (
                f"{self.headline()}. The stored runs of evaluation {self.source} were not "
                f"used: {found}, drift shown, so the baseline ran fresh{tail}"
            )
        return (
            f"{self.headline()}. The runs came from evaluation {self.source} (agent "
            f"fingerprint, suite and seeds unchanged), no agent called for them; {found}, "
            f"no drift shown; the gates kept {self.reserve:.0%} of the false-failure budget "
            f"in reserve against a drift the guard missed{self._fresh_note()}{tail}"
        )


@dataclass(slots=True)
class GateReport:
    """All gates of an evaluation, the verdict of the data and what the build does with it.

    `verdict` is fail when a blocking gate failed, pass when every blocking gate passed,
    undetermined otherwise; `on_undetermined` (fail, warn or pass) says whether an
    undetermined verdict fails the build. `spend` is the build's false-failure budget this
    decision used (1 - confidence, or a staged run's share for one look); `config` the
    effective gate configuration it applied. `quarantines` are the triage quarantines in
    force when the gates were decided at `decided_at` (their cases were left out of the
    regression and P0 gates). `adaptive` is what an adaptive run did, on its final report;
    `reuse` what a stored baseline standing in for a fresh one did.
    """

    gates: list[GateResult]
    environment: str | None = None
    warnings: list[str] = field(default_factory=list)
    on_undetermined: str = "warn"
    spend: float | None = None
    config: dict[str, Any] = field(default_factory=dict)
    quarantines: list[TriageAction] = field(default_factory=list)
    decided_at: float | None = None
    adaptive: AdaptiveSummary | None = None
    reuse: BaselineReuse | None = None

    @property
    def verdict(self) -> str:
        """pass, fail, or undetermined when nothing failed but something is undecided."""
        if any(g.status == "fail" and g.blocking for g in self.gates):
            return "fail"
        if any(g.status == "undetermined" and g.blocking for g in self.gates):
            return "undetermined"
        return "pass"

    @property
    def outcome(self) -> str:
        """The verdict under the environment's rule: fail when a blocking gate failed,
        pass when every one passed or the verdict is undetermined where the environment
        passes it (a pull request fails only on a loss shown beyond its tolerance),
        undetermined otherwise."""
        verdict = self.verdict
        return "pass" if verdict == "undetermined" and self.on_undetermined == "pass" else verdict

    @property
    def passed(self) -> bool:
        """True when the build passes: the verdict passed, or it is undetermined and the
        environment warns on (or passes) an undetermined verdict."""
        verdict = self.verdict
        return verdict == "pass" or (verdict == "undetermined" and self.on_undetermined != "fail")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict including the verdict and whether the build passed."""
        data = _json_ready(self)
        data["verdict"] = self.verdict
        data["outcome"] = self.outcome
        data["passed"] = self.passed
        return data
