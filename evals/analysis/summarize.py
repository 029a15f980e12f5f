"""Turn graded run records into the statistics of an evaluation (a `Summary`).

The case is the unit: an agent's suite score is the mean of its per-case pass rates, and
its uncertainty comes from how cases differ, not from counting every repeat as a new
observation. Repeats measure flakiness and sharpen each case's rate. An errored run (the
agent or the harness failed to produce a gradable answer) is an outcome: it counts as a
failed run unless the suite excludes its kind, and the error rate is reported apart.
Latencies are read from the one source the suite names (`gates.latency`).
docs/statistics.md explains every method and its reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from evals import stats
from evals.analysis.cells import Cell, Cells, ErrorOrder, Tally, TallyRules, mean
from evals.analysis.comparison import SUITE_GROUP, compare, tag_groups, two_sided
from evals.model.gates import GateConfig
from evals.model.results import RunRecord
from evals.model.suite import Case, Suite, SuiteOutline
from evals.model.summary import AgentStats, CaseAgentStats, Comparison, Summary


def _violation_facts(agent: AgentStats, cells: Sequence[Cell]) -> None:
    """How many cases had a policy violation, and the first violation (case and repeat
    order) in words: `case (repeat 2): turn 3: [approval] refund: ...`."""
    agent.violation_cases = sum(1 for cell in cells if cell.violations)
    firsts = [cell.first_violation for cell in cells if cell.first_violation is not None]
    if firsts:
        agent.first_violation = min(firsts)[1]


def _case_stats(
    case_id: str, agent: str, cell: Cell, k: int | None, config: GateConfig
) -> CaseAgentStats:
    counted = cell.counted
    runs = cell.runs
    return CaseAgentStats(
        case_id=case_id,
        agent=agent,
        runs=runs,
        passes=cell.passes,
        fails=cell.fails,
        errors=cell.errors,
        pass_rate=cell.rate if counted else None,
        interval=stats.wilson_interval(cell.passes, counted, config.confidence)
        if counted
        else None,
        pass_hat_k=stats.pass_hat_k(counted, cell.passes, k) if counted and k else None,
        flake=stats.case_flake(cell.passes, counted),
        mean_cost=cell.cost / cell.costed if cell.costed else None,
        unknown_cost_runs=cell.unknown_costs,
        mean_latency_ms=cell.latency / runs if runs else None,
        mean_score=cell.score / cell.scored if cell.scored else None,
        policy_violations=cell.violations,
        excluded=cell.excluded,
    )


def _error_facts(agent: AgentStats, cells: Sequence[Cell], confidence: float) -> None:
    """The pooled error rate (with its Clopper-Pearson interval over the suite), and errors
    by kind with the first message of each (first in case and repeat order)."""
    counts: dict[str, int] = {}
    first: dict[str, tuple[ErrorOrder, str]] = {}
    for cell in cells:
        for kind, count in cell.error_kinds.items():
            counts[kind] = counts.get(kind, 0) + count
            order, message = cell.first_errors[kind]
            if kind not in first or order < first[kind][0]:
                first[kind] = (order, message)
    kinds = sorted(first, key=lambda kind: first[kind][0])
    agent.error_kinds = {kind: counts[kind] for kind in kinds}
    agent.first_errors = {kind: first[kind][1] for kind in kinds}
    if agent.runs:
        agent.error_rate = agent.errors / agent.runs
    if agent.runs and agent.group == SUITE_GROUP:
        side = two_sided(confidence)
        agent.error_interval = (
            stats.clopper_pearson_limit(agent.errors, agent.runs, side, "lower"),
            stats.clopper_pearson_limit(agent.errors, agent.runs, side, "upper"),
        )


def _known_total(cells: Sequence[Cell]) -> float | None:
    """The cost of the runs whose cost is known; None when no run's is (but some ran)."""
    if any(c.costed for c in cells) or not any(c.unknown_costs for c in cells):
        return sum(c.cost for c in cells)
    return None


def _pooled_latencies(cells: Sequence[Cell]) -> tuple[list[float], list[int]]:
    """Every latency of `cells` with how many runs each stands for (see LatencySample)."""
    values: list[float] = []
    weights: list[int] = []
    for cell in cells:
        shown, counts = cell.latencies.items()
        values += shown
        weights += counts
    return values, weights


def _agent_stats(
    agent: str, group: str, cells: Sequence[Cell], k: int | None, config: GateConfig
) -> AgentStats:
    counted = [c for c in cells if c.counted]
    passes = sum(c.passes for c in cells)
    runs_total = sum(c.runs for c in cells)
    result = AgentStats(
        agent=agent,
        group=group,
        cases=len(counted),
        runs=runs_total,
        passes=passes,
        errors=sum(c.errors for c in cells),
        pass_rate=None,
        interval=None,
        total_cost=_known_total(cells),
        unknown_cost_runs=sum(c.unknown_costs for c in cells),
        cost_unknown=next((c.cost_unknown for c in cells if c.cost_unknown), None),
        policy_violations=sum(c.violations for c in cells),
        k=k,
        excluded=sum(c.excluded for c in cells),
    )
    _error_facts(result, cells, config.confidence)
    _violation_facts(result, cells)
    if runs_total:
        result.p95_latency_ms = stats.weighted_percentile(*_pooled_latencies(cells), 0.95)
        result.mean_latency_ms = sum(c.latency for c in cells) / runs_total
    if not counted:
        return result
    rates = [c.rate for c in counted]
    runs = sum(c.counted for c in counted)
    result.pass_rate = sum(rates) / len(rates)
    result.variance = stats.mean_of_means_variance(rates)
    result.counted = runs
    result.effective_n = stats.effective_sample_size(
        result.pass_rate, result.variance, len(counted), runs
    )
    result.conditional_runs = len(counted) ** 2 / sum(1 / c.counted for c in counted)
    side = two_sided(config.confidence)
    result.interval = (
        pass_rate_limit(result, config.estimand, side, "lower"),
        pass_rate_limit(result, config.estimand, side, "upper"),
    )
    result.run_pass_rate = passes / runs
    if len(counted) > 1:
        successes = [c.passes for c in counted]
        sizes = [c.counted for c in counted]
        result.standard_error = stats.clustered_se_of_counts(successes, sizes)
        result.icc = stats.intra_class_correlation_of_counts(successes, sizes)
    if k:
        result.pass_at_k = mean([stats.pass_at_k(c.counted, c.passes, k) for c in counted])
        result.pass_hat_k = mean([stats.pass_hat_k(c.counted, c.passes, k) for c in counted])
    flake = stats.flake_probability([(c.passes, c.counted) for c in counted], config.confidence)
    if flake is not None:
        result.flake_probability, result.flake_interval = flake
    per_accepted = (
        None
        if any(c.unknown_costs for c in counted)
        else stats.ratio_standard_error([c.cost for c in counted], [c.passes for c in counted])
    )
    if per_accepted is not None:
        result.cost_per_accepted, result.cost_per_accepted_se = per_accepted
        if result.cost_per_accepted_se is not None:
            result.cost_per_accepted_interval = cost_per_accepted_interval(
                result.cost_per_accepted, result.cost_per_accepted_se, config.confidence
            )
    return result


def pass_rate_limit(agent: AgentStats, estimand: str, level: float, side: str) -> float:
    """A one-sided limit of `agent`'s mean per-case pass rate at `level`.

    On these cases (`estimand` "cases") the count of passes is a sum of binomials with the
    cases' own rates, whose tails are no heavier than the binomial's with their mean
    (Hoeffding 1956), so the exact Clopper-Pearson limit at the conditional runs is valid
    (exactly so when every case has the same runs). On tasks like these it is the
    Clopper-Pearson limit at the effective sample size with Korn and Graubard's (1998)
    degrees-of-freedom factor. Both are exact-style limits: the Wilson limit misses its
    level on one side near a rate of 0 or 1, which a minimum pass rate near 1 would inherit.
    """
    assert agent.pass_rate is not None
    if estimand == "cases" and agent.conditional_runs:
        size = agent.conditional_runs
    else:
        size = stats.effective_sample_size(
            agent.pass_rate, agent.variance, agent.cases, max(agent.counted, agent.cases)
        )
        if agent.cases > 1:
            size *= (stats.normal_quantile(level) / stats.t_quantile(level, agent.cases - 1)) ** 2
    return stats.effective_clopper_pearson_limit(agent.pass_rate, size, level, side)


def cost_per_accepted_interval(
    estimate: float, standard_error: float, level: float
) -> tuple[float, float]:
    """The delta-method interval of cost per accepted run at two-sided `level`, its lower
    limit clipped at 0 (a cost cannot be negative)."""
    side = two_sided(level)
    return (
        max(0.0, stats.normal_limit(estimate, standard_error, side, "lower")),
        stats.normal_limit(estimate, standard_error, side, "upper"),
    )


def ratio_interval(ratio: float, log_se: float, level: float) -> tuple[float, float]:
    """A bootstrap ratio's interval at two-sided `level`: exp(log ratio ± z·SE)."""
    side = two_sided(level)
    log_ratio = math.log(ratio)
    return (
        math.exp(stats.normal_limit(log_ratio, log_se, side, "lower")),
        math.exp(stats.normal_limit(log_ratio, log_se, side, "upper")),
    )


def summarize(
    runs: Tally | Iterable[RunRecord], suite: Suite | SuiteOutline, gate_config: GateConfig
) -> Summary:
    """Per-case, per-agent, per-tag statistics and, when configured, the comparison.

    `runs` is the evaluation's tally (counted as the runs arrived, under `gate_config`'s
    rules) or its records. The comparison needs `gate_config.baseline` and `.candidate`
    to both have runs. `suite` may be the loaded suite or the outline stored with an
    evaluation.
    """
    tally = runs if isinstance(runs, Tally) else Tally.of(runs, gate_config)
    if tally.rules != TallyRules.of(gate_config):
        raise ValueError("the runs were counted under other gate rules than these")
    cells = tally.cells
    present = {agent for agent, _ in cells}
    agents = [a for a in suite.agent_labels if a in present]
    agents += sorted(present.difference(agents))
    case_ids = {case_id for _, case_id in cells}
    cases = [c for c in suite.cases if c.id in case_ids]
    known = {c.id for c in cases}
    cases += [
        Case(index=len(cases) + i, id=case_id, description=case_id, vars={}, asserts=[])
        for i, case_id in enumerate(sorted(case_ids - known))
    ]
    case_stats: list[CaseAgentStats] = []
    agent_stats: list[AgentStats] = []
    tag_stats: list[AgentStats] = []
    for agent in agents:
        own = {c.id: cells[(agent, c.id)] for c in cases if (agent, c.id) in cells}
        counted = [cell.counted for cell in own.values() if cell.counted]
        k = min(counted) if counted else None
        case_stats += [_case_stats(cid, agent, cell, k, gate_config) for cid, cell in own.items()]
        agent_stats.append(_agent_stats(agent, SUITE_GROUP, list(own.values()), k, gate_config))
        for tag, tagged in tag_groups(cases):
            members = [own[c.id] for c in tagged if c.id in own]
            if members:
                tag_stats.append(_agent_stats(agent, tag, members, k, gate_config))
    comparison = None
    if gate_config.baseline in present and gate_config.candidate in present:
        comparison = compare(
            tally, cases, gate_config, {(s.agent, s.case_id): s for s in case_stats}
        )
        _attach_ratios(agent_stats, comparison, cells, cases, gate_config)
    else:
        for agent_stat in agent_stats:
            _single_latency_interval(agent_stat, cells, cases, gate_config)
    return Summary(
        suite_id=suite.suite_id,
        version=suite.version,
        fingerprint=suite.fingerprint,
        confidence=gate_config.confidence,
        case_stats=case_stats,
        agents=agent_stats,
        tags=tag_stats,
        comparison=comparison,
        latency_source=gate_config.latency,
        scorecards=tally.scorecards.cards(agents),
    )


def _shown_ratio(boot: stats.PairedBootstrap, level: float) -> tuple[float, float] | None:
    """The ratio's interval as the gates compute their limits (log-normal with the
    bootstrap SE); the percentile interval when the SE is undefined (a zero ratio)."""
    if boot.ratio is not None and boot.ratio > 0 and boot.log_ratio_se is not None:
        return ratio_interval(boot.ratio, boot.log_ratio_se, level)
    return boot.ratio_interval


def _case_id(case: Case) -> str:
    """Bootstrap resamples follow case ids, so results do not depend on suite order."""
    return case.id


def _latency_groups(
    cells: Cells, agent: str, cases: Sequence[Case]
) -> tuple[list[list[float]], list[list[int]]]:
    """Each case's latencies for `agent`, and how many runs each stands for."""
    items = [cells[(agent, c.id)].latencies.items() for c in cases]
    return [values for values, _ in items], [weights for _, weights in items]


def _single_latency_interval(
    agent_stat: AgentStats, cells: Cells, cases: Sequence[Case], config: GateConfig
) -> None:
    own = sorted((c for c in cases if (agent_stat.agent, c.id) in cells), key=_case_id)
    if len(own) > 1:
        groups, weights = _latency_groups(cells, agent_stat.agent, own)
        _, agent_stat.p95_latency_interval = stats.cluster_quantile_interval(
            groups, 0.95, config.confidence, weights
        )


def _cost_totals(cells: Cells, agent: str, cases: Sequence[Case]) -> tuple[list[float], list[int]]:
    """Each case's total cost and runs for `agent`."""
    own = [cells[(agent, c.id)] for c in cases]
    return [c.cost for c in own], [c.costed for c in own]


def _attach_ratios(
    agent_stats: list[AgentStats],
    comparison: Comparison,
    cells: Cells,
    cases: Sequence[Case],
    config: GateConfig,
) -> None:
    """Paired cluster bootstrap of p95 latency and mean cost over the shared cases."""
    if config.baseline is None or config.candidate is None:
        return
    shared = sorted(
        (
            c
            for c in cases
            if (config.baseline, c.id) in cells and (config.candidate, c.id) in cells
        ),
        key=_case_id,
    )
    if len(shared) < 2:
        return
    assert config.baseline is not None and config.candidate is not None
    candidate, candidate_counts = _latency_groups(cells, config.candidate, shared)
    baseline, baseline_counts = _latency_groups(cells, config.baseline, shared)
    latency = stats.paired_quantile_bootstrap(
        candidate,
        baseline,
        0.95,
        config.confidence,
        counts=(candidate_counts, baseline_counts),
    )
    comparison.latency_ratio, comparison.latency_ratio_log_se = latency.ratio, latency.log_ratio_se
    comparison.latency_ratio_interval = _shown_ratio(latency, config.confidence)
    both = [cells[(agent, c.id)] for agent in (config.candidate, config.baseline) for c in shared]
    # no ratio of costs that are partly unknown: the cost gate names the unknown instead
    if not any(cell.unknown_costs for cell in both):
        cost = stats.paired_total_bootstrap(
            _cost_totals(cells, config.candidate, shared),
            _cost_totals(cells, config.baseline, shared),
            config.confidence,
        )
        comparison.cost_ratio, comparison.cost_ratio_log_se = cost.ratio, cost.log_ratio_se
        comparison.cost_ratio_interval = _shown_ratio(cost, config.confidence)
    for agent_stat in agent_stats:
        if agent_stat.agent == config.candidate:
            agent_stat.p95_latency_interval = latency.candidate_interval
        elif agent_stat.agent == config.baseline:
            agent_stat.p95_latency_interval = latency.baseline_interval
