"""Turn graded run records into the statistics of an evaluation (a `Summary`).

The case is the unit: an agent's suite score is the mean of its per-case pass rates, and
its uncertainty comes from how cases differ, not from counting every repeat as a new
observation. Repeats measure flakiness and sharpen each case's rate. Errors (the agent or
the harness failed to produce a gradable answer) are counted apart and left out of rates.
docs/statistics.md explains every method and its reference.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from evals import stats
from evals.model.gates import GateConfig
from evals.model.results import RunRecord
from evals.model.suite import Case, Suite, SuiteOutline
from evals.model.summary import (
    AgentStats,
    CaseAgentStats,
    CaseComparison,
    Comparison,
    GroupComparison,
    Interval,
    Summary,
    Verdict,
)

SUITE_GROUP = "suite"


@dataclass(slots=True)
class _Cell:
    """The runs of one agent on one case."""

    records: list[RunRecord] = field(default_factory=list)
    passes: int = 0
    fails: int = 0
    errors: int = 0

    @property
    def graded(self) -> int:
        return self.passes + self.fails

    @property
    def rate(self) -> float:
        return self.passes / self.graded


def _cells(records: Sequence[RunRecord]) -> dict[tuple[str, str], _Cell]:
    cells: dict[tuple[str, str], _Cell] = defaultdict(_Cell)
    for record in records:
        cell = cells[(record.key.agent, record.key.case_id)]
        cell.records.append(record)
        if record.status == "pass":
            cell.passes += 1
        elif record.status == "fail":
            cell.fails += 1
        else:
            cell.errors += 1
    return cells


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _violations(cell: _Cell) -> int:
    return sum(1 for r in cell.records if r.grade is not None and r.grade.policy_violation)


def _case_stats(
    case_id: str, agent: str, cell: _Cell, k: int | None, confidence: float
) -> CaseAgentStats:
    graded = cell.graded
    scores = [r.grade.score for r in cell.records if r.grade is not None and r.status != "error"]
    return CaseAgentStats(
        case_id=case_id,
        agent=agent,
        runs=len(cell.records),
        passes=cell.passes,
        fails=cell.fails,
        errors=cell.errors,
        pass_rate=cell.rate if graded else None,
        interval=stats.wilson_interval(cell.passes, graded, confidence) if graded else None,
        pass_hat_k=stats.pass_hat_k(graded, cell.passes, k) if graded and k else None,
        flake=stats.case_flake(cell.passes, graded),
        mean_cost=_mean([r.cost for r in cell.records]),
        mean_latency_ms=_mean([r.latency_ms for r in cell.records]),
        mean_score=_mean(scores),
        policy_violations=_violations(cell),
    )


def _suite_rate_interval(
    cells: Sequence[_Cell], confidence: float
) -> tuple[float, Interval, float, float | None]:
    """(mean per-case rate, effective-n Wilson interval, n*, variance) over graded cells."""
    rates = [c.rate for c in cells]
    rate = sum(rates) / len(rates)
    variance = stats.mean_of_means_variance(rates)
    graded = sum(c.graded for c in cells)
    size = stats.effective_sample_size(rate, variance, len(cells), graded)
    interval = stats.effective_wilson_interval(rate, variance, len(cells), graded, confidence)
    return rate, interval, size, variance


def _agent_stats(
    agent: str, group: str, cells: Sequence[_Cell], k: int | None, confidence: float
) -> AgentStats:
    records = [r for c in cells for r in c.records]
    graded_cells = [c for c in cells if c.graded]
    passes = sum(c.passes for c in cells)
    result = AgentStats(
        agent=agent,
        group=group,
        cases=len(graded_cells),
        runs=len(records),
        passes=passes,
        errors=sum(c.errors for c in cells),
        pass_rate=None,
        interval=None,
        total_cost=sum(r.cost for r in records),
        policy_violations=sum(_violations(c) for c in cells),
        k=k,
    )
    if records:
        latencies = [r.latency_ms for r in records]
        result.p95_latency_ms = stats.percentile(latencies, 0.95)
        result.mean_latency_ms = sum(latencies) / len(latencies)
    if not graded_cells:
        return result
    rate, interval, size, _ = _suite_rate_interval(graded_cells, confidence)
    graded = sum(c.graded for c in graded_cells)
    result.pass_rate, result.interval, result.effective_n = rate, interval, size
    result.run_pass_rate = passes / graded
    if len(graded_cells) > 1:
        scores = [1.0 if r.status == "pass" else 0.0 for r in records if r.status != "error"]
        owners = [r.key.case_id for r in records if r.status != "error"]
        result.standard_error = stats.clustered_se(scores, owners)
        result.icc = stats.intra_class_correlation(scores, owners)
    if k:
        result.pass_at_k = _mean([stats.pass_at_k(c.graded, c.passes, k) for c in graded_cells])
        result.pass_hat_k = _mean([stats.pass_hat_k(c.graded, c.passes, k) for c in graded_cells])
    result.flake_rate = stats.flake_rate([(c.passes, c.graded) for c in graded_cells])
    result.mean_flake = _mean(
        [f for c in graded_cells if (f := stats.case_flake(c.passes, c.graded)) is not None]
    )
    per_accepted = stats.ratio_estimate(
        [sum(r.cost for r in c.records) for c in graded_cells],
        [c.passes for c in graded_cells],
        confidence,
    )
    if per_accepted is not None:
        result.cost_per_accepted, result.cost_per_accepted_interval = per_accepted
    return result


def _groups(cases: Sequence[Case]) -> list[tuple[str, list[Case]]]:
    by_tag: dict[str, list[Case]] = {}
    for case in cases:
        for tag in case.tags:
            by_tag.setdefault(tag, []).append(case)
    return sorted(by_tag.items())


def summarize(
    records: list[RunRecord], suite: Suite | SuiteOutline, gate_config: GateConfig
) -> Summary:
    """Per-case, per-agent, per-tag statistics and, when configured, the comparison.

    The comparison needs `gate_config.baseline` and `.candidate` to both have records.
    `suite` may be the loaded suite or the outline stored with an evaluation.
    """
    confidence = gate_config.confidence
    cells = _cells(records)
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
        graded = [cell.graded for cell in own.values() if cell.graded]
        k = min(graded) if graded else None
        case_stats += [_case_stats(cid, agent, cell, k, confidence) for cid, cell in own.items()]
        agent_stats.append(_agent_stats(agent, SUITE_GROUP, list(own.values()), k, confidence))
        for tag, tagged in _groups(cases):
            members = [own[c.id] for c in tagged if c.id in own]
            if members:
                tag_stats.append(_agent_stats(agent, tag, members, k, confidence))
    comparison = None
    if gate_config.baseline in present and gate_config.candidate in present:
        comparison = compare(
            cells, cases, gate_config, {(s.agent, s.case_id): s for s in case_stats}
        )
        _attach_latency_intervals(agent_stats, comparison, cells, cases, gate_config)
    else:
        for agent_stat in agent_stats:
            _single_latency_interval(agent_stat, cells, cases, confidence)
    return Summary(
        suite_id=suite.suite_id,
        version=suite.version,
        fingerprint=suite.fingerprint,
        confidence=confidence,
        case_stats=case_stats,
        agents=agent_stats,
        tags=tag_stats,
        comparison=comparison,
    )


def _case_id(case: Case) -> str:
    """Bootstrap resamples follow case ids, so results do not depend on suite order."""
    return case.id


def _latency_groups(
    cells: dict[tuple[str, str], _Cell], agent: str, cases: Sequence[Case]
) -> list[list[float]]:
    return [[r.latency_ms for r in cells[(agent, c.id)].records] for c in cases]


def _single_latency_interval(
    agent_stat: AgentStats,
    cells: dict[tuple[str, str], _Cell],
    cases: Sequence[Case],
    confidence: float,
) -> None:
    own = sorted((c for c in cases if (agent_stat.agent, c.id) in cells), key=_case_id)
    if len(own) > 1:
        groups = _latency_groups(cells, agent_stat.agent, own)
        _, agent_stat.p95_latency_interval = stats.cluster_bootstrap_quantile(
            groups, 0.95, confidence
        )


def _attach_latency_intervals(
    agent_stats: list[AgentStats],
    comparison: Comparison,
    cells: dict[tuple[str, str], _Cell],
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
    latency = stats.paired_quantile_bootstrap(
        _latency_groups(cells, config.candidate, shared),
        _latency_groups(cells, config.baseline, shared),
        0.95,
        config.confidence,
    )
    cost = stats.paired_mean_bootstrap(
        [[r.cost for r in cells[(config.candidate, c.id)].records] for c in shared],
        [[r.cost for r in cells[(config.baseline, c.id)].records] for c in shared],
        config.confidence,
    )
    comparison.latency_ratio, comparison.latency_ratio_interval = (
        latency.ratio,
        latency.ratio_interval,
    )
    comparison.cost_ratio, comparison.cost_ratio_interval = cost.ratio, cost.ratio_interval
    for agent_stat in agent_stats:
        if agent_stat.agent == config.candidate:
            agent_stat.p95_latency_interval = latency.candidate_interval
        elif agent_stat.agent == config.baseline:
            agent_stat.p95_latency_interval = latency.baseline_interval


def _pair_seed(record: RunRecord) -> int | None:
    return record.metadata.get("shared_seed")


def _paired_table(
    candidate: _Cell, baseline: _Cell, paired: bool
) -> tuple[int, int, int, int] | None:
    """(both, candidate only, baseline only, neither) when every graded run pairs up.

    Runs pair only when the suite declares `gates.paired` (its agents draw their
    environment's randomness from the shared seed) and both agents ran the same prompt
    and repeat of the case with the same shared seed; otherwise the samples are
    independent.
    """
    if not paired or candidate.graded != baseline.graded or candidate.errors or baseline.errors:
        return None
    base = {(r.key.prompt_id, r.key.repeat): r for r in baseline.records}
    table = [0, 0, 0, 0]
    for run in candidate.records:
        other = base.get((run.key.prompt_id, run.key.repeat))
        if other is None or _pair_seed(other) is None or _pair_seed(other) != _pair_seed(run):
            return None
        table[(0 if run.passed else 2) + (0 if other.passed else 1)] += 1
    return table[0], table[1], table[2], table[3]


def _case_verdict(
    difference: float, interval: Interval, p_adjusted: float, config: GateConfig
) -> Verdict:
    alpha = 1 - config.confidence
    low, high = interval
    if p_adjusted < alpha and high < -config.margin:
        return "regression"
    if p_adjusted < alpha and low > config.margin:
        return "improvement"
    if -config.equivalence_margin <= low and high <= config.equivalence_margin:
        return "equivalent"
    return "inconclusive"


def _compare_case(
    case: Case,
    candidate: CaseAgentStats,
    baseline: CaseAgentStats,
    pair: tuple[int, int, int, int] | None,
) -> CaseComparison:
    return CaseComparison(
        case_id=case.id,
        description=case.description,
        tags=case.tags,
        priority=case.priority,
        baseline=baseline,
        candidate=candidate,
        difference=None,
        interval=None,
        p_value=None,
        p_adjusted=None,
        verdict="insufficient data",
        why_it_exists=case.why_it_exists,
        paired=pair is not None,
    )


def compare(
    cells: dict[tuple[str, str], _Cell],
    cases: Sequence[Case],
    config: GateConfig,
    case_stats: dict[tuple[str, str], CaseAgentStats],
) -> Comparison:
    """Candidate against baseline: per case, per tag and over the suite."""
    assert config.baseline is not None and config.candidate is not None
    baseline, candidate = config.baseline, config.candidate
    confidence = config.confidence
    minimum = max(1, config.min_repeats)
    results: list[CaseComparison] = []
    shared: list[Case] = []
    warnings: list[str] = []
    one_sided: list[str] = []
    for case in cases:
        ran = [(agent, case.id) in cells for agent in (candidate, baseline)]
        if not all(ran):
            if any(ran):
                one_sided.append(case.id)
            continue
        cand, base = cells[(candidate, case.id)], cells[(baseline, case.id)]
        pair = _paired_table(cand, base, config.paired)
        result = _compare_case(
            case, case_stats[(candidate, case.id)], case_stats[(baseline, case.id)], pair
        )
        results.append(result)
        if not cand.graded or not base.graded:
            continue
        shared.append(case)
        result.difference = cand.rate - base.rate
        if pair is not None:
            result.interval = stats.paired_newcombe_interval(*pair, confidence)
            result.p_value = stats.mcnemar_exact(pair[1], pair[2], mid_p=True)
        else:
            result.interval = stats.newcombe_interval(
                cand.passes, cand.graded, base.passes, base.graded, confidence
            )
            result.p_value = stats.boschloo_p_value(
                cand.passes, cand.graded, base.passes, base.graded
            )
    tested = [r for r in results if r.p_value is not None]
    for result, adjusted in zip(
        tested,
        stats.benjamini_hochberg([r.p_value for r in tested if r.p_value is not None]),
        strict=True,
    ):
        result.p_adjusted = adjusted
        if (
            result.difference is not None
            and result.interval is not None
            and min(
                result.candidate.passes + result.candidate.fails,
                result.baseline.passes + result.baseline.fails,
            )
            >= minimum
        ):
            result.verdict = _case_verdict(result.difference, result.interval, adjusted, config)
    errored = [r.case_id for r in results if r.candidate.errors or r.baseline.errors]
    if errored:
        warnings.append(f"{len(errored)} case(s) had errored runs, counted apart from failures")
    overall = _compare_group(SUITE_GROUP, shared, cells, config)
    tags = [_compare_group(tag, tagged, cells, config) for tag, tagged in _groups(shared)]
    tested_tags = [t for t in tags if t.p_value is not None]
    for tag, adjusted in zip(
        tested_tags,
        stats.holm([t.p_value for t in tested_tags if t.p_value is not None]),
        strict=True,
    ):
        tag.p_adjusted = adjusted
        _apply_group_verdict(tag, config, corrected=len(tested_tags) > 1)
    if one_sided:
        shown = ", ".join(one_sided[:3]) + (", ..." if len(one_sided) > 3 else "")
        warnings.append(
            f"{len(one_sided)} case(s) were run by only one agent and are left out: {shown}"
        )
    return Comparison(
        baseline=baseline,
        candidate=candidate,
        overall=overall,
        tags=tags,
        cases=results,
        warnings=warnings,
        paired_cases=sum(1 for r in results if r.paired),
    )


def _compare_group(
    group: str, cases: Sequence[Case], cells: dict[tuple[str, str], _Cell], config: GateConfig
) -> GroupComparison:
    """MOVER difference of mean per-case rates over `cases` (all graded by both agents)."""
    assert config.baseline is not None and config.candidate is not None
    result = GroupComparison(
        group=group,
        cases=len(cases),
        baseline_rate=None,
        candidate_rate=None,
        difference=None,
        interval=None,
        verdict="insufficient data",
    )
    if not cases:
        result.explanation = f"no case in {_where(group)} has graded runs from both agents"
        return result
    cand = [cells[(config.candidate, c.id)] for c in cases]
    base = [cells[(config.baseline, c.id)] for c in cases]
    cand_rate, cand_interval, _, _ = _suite_rate_interval(cand, config.confidence)
    base_rate, base_interval, _, _ = _suite_rate_interval(base, config.confidence)
    correlation = stats.pearson_correlation([c.rate for c in cand], [b.rate for b in base])
    result.candidate_rate, result.baseline_rate = cand_rate, base_rate
    result.difference = cand_rate - base_rate
    result.correlation = correlation
    result.interval = stats.mover_difference(
        cand_rate, cand_interval, base_rate, base_interval, correlation
    )
    result.fixed_suite_interval = stats.normal_interval(
        result.difference,
        stats.stratified_difference_variance(
            [c.rate for c in cand],
            [c.graded for c in cand],
            [b.rate for b in base],
            [b.graded for b in base],
        ),
        config.confidence,
    )
    result.p_value = stats.paired_t_p_value(
        [c.rate - b.rate for c, b in zip(cand, base, strict=True)]
    )
    _apply_group_verdict(result, config, corrected=False)
    return result


def _where(group: str) -> str:
    return "the suite" if group == SUITE_GROUP else f"tag {group}"


def _apply_group_verdict(result: GroupComparison, config: GateConfig, corrected: bool) -> None:
    """Verdict and a sentence a developer can act on, from the interval (and Holm p)."""
    assert result.interval is not None and result.difference is not None
    low, high = result.interval
    difference = result.difference
    alpha = 1 - config.confidence
    significant = not corrected or (result.p_adjusted is not None and result.p_adjusted < alpha)
    where = _where(result.group)
    if difference < 0:
        change = f"candidate lost {-difference:.2f} [{-high:.2f}, {-low:.2f}] on {where}"
    else:
        change = f"candidate gained {difference:.2f} [{low:.2f}, {high:.2f}] on {where}"
    suffix = ", significant after correction" if corrected else ""
    if high < -config.margin or low > config.margin:
        word: Verdict = "regression" if high < -config.margin else "improvement"
        if significant:
            result.verdict = word
            result.explanation = f"{change}: {word}{suffix}"
            return
        result.verdict = "inconclusive"
        result.explanation = (
            f"{change}: inconclusive, the {word} is not significant after correction across tags"
        )
        return
    if -config.equivalence_margin <= low and high <= config.equivalence_margin:
        result.verdict = "equivalent"
        result.explanation = f"{change}: equivalent within ±{config.equivalence_margin:.2f}"
        return
    result.verdict = "inconclusive"
    result.explanation = (
        f"{change}: inconclusive, the interval is too wide to tell; more cases or "
        "repeats would narrow it"
    )
