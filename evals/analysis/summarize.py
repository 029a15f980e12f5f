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
from collections import Counter
from collections.abc import Sequence

from evals import stats
from evals.analysis.cells import Cell, Cells, count_cells, mean
from evals.analysis.comparison import SUITE_GROUP, compare, tag_groups, two_sided
from evals.analysis.scorecard import scorecards
from evals.model.gates import GateConfig
from evals.model.results import RunRecord
from evals.model.suite import Case, Suite, SuiteOutline
from evals.model.summary import AgentStats, CaseAgentStats, Comparison, Summary

__all__ = ["SUITE_GROUP", "cost_per_accepted_interval", "ratio_interval", "summarize"]


def _violations(cell: Cell) -> int:
    return sum(1 for r in cell.records if r.grade is not None and r.grade.policy_violation)


def _costs(records: Sequence[RunRecord]) -> tuple[list[float], list[RunRecord]]:
    """The costs of the runs whose cost is known (a run the agent never answered cost
    nothing the harness saw: 0), and the answered runs whose cost is unknown."""
    unknown = [r for r in records if r.cost_unknown is not None]
    known = [r.cost or 0.0 for r in records if r.cost_unknown is None]
    return known, unknown


def _known_total(records: Sequence[RunRecord]) -> float | None:
    """The cost of `records` when every answered run's cost is known, else None."""
    known, unknown = _costs(records)
    return None if unknown else sum(known)


def _case_stats(
    case_id: str, agent: str, cell: Cell, k: int | None, config: GateConfig
) -> CaseAgentStats:
    counted = cell.counted
    scores = [r.grade.score for r in cell.records if r.grade is not None and r.status != "error"]
    known_costs, unknown_costs = _costs(cell.records)
    return CaseAgentStats(
        case_id=case_id,
        agent=agent,
        runs=len(cell.records),
        passes=cell.passes,
        fails=cell.fails,
        errors=cell.errors,
        pass_rate=cell.rate if counted else None,
        interval=stats.wilson_interval(cell.passes, counted, config.confidence)
        if counted
        else None,
        pass_hat_k=stats.pass_hat_k(counted, cell.passes, k) if counted and k else None,
        flake=stats.case_flake(cell.passes, counted),
        mean_cost=mean(known_costs),
        unknown_cost_runs=len(unknown_costs),
        mean_latency_ms=mean([r.latency(config.latency) for r in cell.records]),
        mean_score=mean(scores),
        policy_violations=_violations(cell),
        excluded=cell.excluded,
    )


def _error_facts(agent: AgentStats, cells: Sequence[Cell], confidence: float) -> None:
    """The pooled error rate (with its Clopper-Pearson interval over the suite), and errors
    by kind with the first message of each (first in case and repeat order)."""
    errored = sorted(
        (r for c in cells for r in c.records if r.status == "error"),
        key=lambda r: (r.case_index, r.key.case_id, r.key.repeat, r.key.prompt_id),
    )
    agent.error_kinds = dict(Counter(r.error_kind or "agent_error" for r in errored))
    for record in errored:
        agent.first_errors.setdefault(
            record.error_kind or "agent_error", record.error or record.response.error or ""
        )
    if agent.runs:
        agent.error_rate = agent.errors / agent.runs
    if agent.runs and agent.group == SUITE_GROUP:
        side = two_sided(confidence)
        agent.error_interval = (
            stats.clopper_pearson_limit(agent.errors, agent.runs, side, "lower"),
            stats.clopper_pearson_limit(agent.errors, agent.runs, side, "upper"),
        )


def _agent_stats(
    agent: str, group: str, cells: Sequence[Cell], k: int | None, config: GateConfig
) -> AgentStats:
    records = [r for c in cells for r in c.records]
    counted = [c for c in cells if c.counted]
    passes = sum(c.passes for c in cells)
    known_costs, unknown_costs = _costs(records)
    result = AgentStats(
        agent=agent,
        group=group,
        cases=len(counted),
        runs=len(records),
        passes=passes,
        errors=sum(c.errors for c in cells),
        pass_rate=None,
        interval=None,
        total_cost=sum(known_costs) if known_costs or not unknown_costs else None,
        unknown_cost_runs=len(unknown_costs),
        cost_unknown=unknown_costs[0].cost_unknown if unknown_costs else None,
        policy_violations=sum(_violations(c) for c in cells),
        k=k,
        excluded=sum(c.excluded for c in cells),
    )
    _error_facts(result, cells, config.confidence)
    if records:
        latencies = [r.latency(config.latency) for r in records]
        result.p95_latency_ms = stats.percentile(latencies, 0.95)
        result.mean_latency_ms = sum(latencies) / len(latencies)
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
        outcomes = [r for c in counted for r in c.outcomes()]
        scores = [1.0 if r.status == "pass" else 0.0 for r in outcomes]
        owners = [r.key.case_id for r in outcomes]
        result.standard_error = stats.clustered_se(scores, owners)
        result.icc = stats.intra_class_correlation(scores, owners)
    if k:
        result.pass_at_k = mean([stats.pass_at_k(c.counted, c.passes, k) for c in counted])
        result.pass_hat_k = mean([stats.pass_hat_k(c.counted, c.passes, k) for c in counted])
    flake = stats.flake_probability([(c.passes, c.counted) for c in counted], config.confidence)
    if flake is not None:
        result.flake_probability, result.flake_interval = flake
    case_costs = [_known_total(c.records) for c in counted]
    per_accepted = (
        None
        if None in case_costs
        else stats.ratio_standard_error(
            [cost or 0.0 for cost in case_costs], [c.passes for c in counted]
        )
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
    records: list[RunRecord], suite: Suite | SuiteOutline, gate_config: GateConfig
) -> Summary:
    """Per-case, per-agent, per-tag statistics and, when configured, the comparison.

    The comparison needs `gate_config.baseline` and `.candidate` to both have records.
    `suite` may be the loaded suite or the outline stored with an evaluation.
    """
    cells = count_cells(records, gate_config.exclude_errors)
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
            cells, cases, gate_config, {(s.agent, s.case_id): s for s in case_stats}
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
        scorecards=scorecards(records, agents),
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
    cells: Cells, agent: str, cases: Sequence[Case], source: str
) -> list[list[float]]:
    return [[r.latency(source) for r in cells[(agent, c.id)].records] for c in cases]


def _single_latency_interval(
    agent_stat: AgentStats, cells: Cells, cases: Sequence[Case], config: GateConfig
) -> None:
    own = sorted((c for c in cases if (agent_stat.agent, c.id) in cells), key=_case_id)
    if len(own) > 1:
        groups = _latency_groups(cells, agent_stat.agent, own, config.latency)
        _, agent_stat.p95_latency_interval = stats.cluster_quantile_interval(
            groups, 0.95, config.confidence
        )


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
    latency = stats.paired_quantile_bootstrap(
        _latency_groups(cells, config.candidate, shared, config.latency),
        _latency_groups(cells, config.baseline, shared, config.latency),
        0.95,
        config.confidence,
    )
    comparison.latency_ratio, comparison.latency_ratio_log_se = latency.ratio, latency.log_ratio_se
    comparison.latency_ratio_interval = _shown_ratio(latency, config.confidence)
    candidate_costs = [_costs(cells[(config.candidate, c.id)].records) for c in shared]
    baseline_costs = [_costs(cells[(config.baseline, c.id)].records) for c in shared]
    # no ratio of costs that are partly unknown: the cost gate names the unknown instead
    if not any(unknown for _, unknown in [*candidate_costs, *baseline_costs]):
        cost = stats.paired_mean_bootstrap(
            [known for known, _ in candidate_costs],
            [known for known, _ in baseline_costs],
            config.confidence,
        )
        comparison.cost_ratio, comparison.cost_ratio_log_se = cost.ratio, cost.log_ratio_se
        comparison.cost_ratio_interval = _shown_ratio(cost, config.confidence)
    for agent_stat in agent_stats:
        if agent_stat.agent == config.candidate:
            agent_stat.p95_latency_interval = latency.candidate_interval
        elif agent_stat.agent == config.baseline:
            agent_stat.p95_latency_interval = latency.baseline_interval
