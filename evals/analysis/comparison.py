"""Candidate against baseline per case, per tag and over the suite: verdicts with the
interval that decides them.

Each family of verdicts has one test, one correction and one interval, and the verdict
reads the interval, so the two cannot disagree:

- cases: the exact unconditional score test (Tango's statistic for paired runs),
  Benjamini-Hochberg q-values across the compared cases, and the test's inversion at the
  Benjamini-Yekutieli level 1 - R·alpha/m, which excludes 0 exactly for the cases BH
  selects;
- tags: the test of the configuration's estimand (the stratified score test over the tag's
  cases' runs on these cases, the t test on per-case differences on tasks like these),
  Holm across the tags, and its inversion at the level of Holm's deciding step,
  1 - alpha·p/q;
- the suite: the same test at the confidence level.

A verdict is a regression when the whole interval lies below -margin, an improvement
when above +margin, equivalent when within ±equivalence_margin, and inconclusive
otherwise; each carries a sentence telling "not significant after correcting for m
cases" apart from "interval too wide". docs/statistics.md gives the references.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Literal, Protocol

from evals import stats
from evals.analysis.cells import Cell, Cells, Tally
from evals.model.gates import GateConfig, about
from evals.model.suite import Case
from evals.model.summary import (
    CaseAgentStats,
    CaseComparison,
    Comparison,
    GroupComparison,
    Interval,
    Verdict,
)

SUITE_GROUP = "suite"
Side = Literal["lower", "upper"]
PairTable = tuple[int, int, int, int]


def two_sided(level: float) -> float:
    """The one-sided level of each limit of a two-sided interval at `level`."""
    return 1 - (1 - level) / 2


def roles(config: GateConfig) -> tuple[str, str]:
    """The (candidate, baseline) labels of a comparison's gate configuration."""
    if config.candidate is None or config.baseline is None:
        raise ValueError("a comparison needs both a baseline and a candidate")
    return config.candidate, config.baseline


def paired_table(tally: Tally, candidate: Cell, baseline: Cell) -> PairTable | None:
    """(both passed, candidate only, baseline only, neither) when every counted run pairs up.

    Runs pair only when the suite declares `gates.paired` (its agents draw their
    environment's randomness from the shared seed) and both agents ran the same prompt
    and repeat of the case with the same shared seed; an errored run is a failed one.
    Otherwise, or when an excluded error leaves a run without its pair, the samples are
    independent.
    """
    if tally.rules.paired is None or candidate.excluded or baseline.excluded:
        return None
    if candidate.counted != baseline.counted:
        return None
    return tally.paired_table(candidate)


def verdict_of(interval: Interval, config: GateConfig) -> Verdict:
    """The verdict an interval shows against the margins."""
    low, high = interval
    if high < -config.margin:
        return "regression"
    if low > config.margin:
        return "improvement"
    if -config.equivalence_margin <= low and high <= config.equivalence_margin:
        return "equivalent"
    return "inconclusive"


def _correction(count: int, noun: str) -> str:
    return "" if count < 2 else f" after correcting for {count} {noun}s"


def verdict_reason(
    verdict: Verdict,
    p_value: float,
    adjusted: float,
    level: float,
    family: tuple[int, str],
    config: GateConfig,
) -> str:
    """Why the verdict is what it is, in one sentence.

    `family` is (number of hypotheses corrected for, their noun). The sentence tells a
    change that is significant alone but not after the correction apart from an interval
    too wide to tell anything, and names the q-value and the interval's level.
    """
    alpha = 1 - config.confidence
    count, noun = family
    corrected = _correction(count, noun)
    at = f"the interval at {100 * level:.4g} %"
    q = f"q = {adjusted:.3g}"
    if verdict in ("regression", "improvement"):
        side = (
            f"below -{config.margin:.3g}"
            if verdict == "regression"
            else f"above +{config.margin:.3g}"
        )
        return f"significant{corrected} ({q}); {at} lies wholly {side}"
    if verdict == "equivalent":
        return f"{at} lies within ±{config.equivalence_margin:.3g}"
    if adjusted <= alpha:
        return (
            f"significant{corrected} ({q}), but {at} reaches within the margin ±{config.margin:.3g}"
        )
    if p_value <= alpha:
        return f"significant alone (p = {p_value:.3g}) but not{corrected} ({q})"
    more = "repeats" if noun == "case" else "cases or repeats"
    return f"interval too wide to tell (p = {p_value:.3g}): more {more} would narrow it"


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
        pair=pair,
    )


def case_p_value(candidate: Cell, baseline: Cell, pair: PairTable | None) -> float:
    """Two-sided exact p-value of no difference on one case (paired when `pair`)."""
    if pair is not None:
        return stats.paired_exact_p_value(*pair)
    return stats.exact_score_p_value(
        candidate.passes, candidate.counted, baseline.passes, baseline.counted
    )


def _case_interval(result: CaseComparison, level: float) -> Interval:
    if result.pair is not None:
        return stats.paired_exact_interval(*result.pair, confidence=level)
    cand, base = result.candidate, result.baseline
    return stats.exact_score_interval(
        cand.passes, cand.counted, base.passes, base.counted, confidence=level
    )


def _decide_cases(results: list[CaseComparison], config: GateConfig) -> None:
    """BH across the tested cases, intervals at the BY level, verdicts and reasons."""
    tested = [r for r in results if r.p_value is not None]
    if not tested:
        return
    alpha = 1 - config.confidence
    q_values, level = stats.bh_confidences(
        [r.p_value for r in tested if r.p_value is not None], alpha
    )
    minimum = max(1, config.min_repeats)
    for result, q in zip(tested, q_values, strict=True):
        assert result.p_value is not None
        result.p_adjusted = q
        result.level = level
        result.interval = _case_interval(result, level)
        if min(result.candidate.counted, result.baseline.counted) < minimum:
            result.reason = f"fewer than {minimum} counted runs for an agent"
            continue
        result.verdict = verdict_of(result.interval, config)
        result.reason = verdict_reason(
            result.verdict, result.p_value, q, level, (len(tested), "case"), config
        )


def compare(
    tally: Tally,
    cases: Sequence[Case],
    config: GateConfig,
    case_stats: dict[tuple[str, str], CaseAgentStats],
) -> Comparison:
    """Candidate against baseline: per case, per tag and over the suite."""
    assert config.baseline is not None and config.candidate is not None
    baseline, candidate = config.baseline, config.candidate
    cells = tally.cells
    results: list[CaseComparison] = []
    shared: list[Case] = []
    one_sided: list[str] = []
    for case in cases:
        ran = [(agent, case.id) in cells for agent in (candidate, baseline)]
        if not all(ran):
            if any(ran):
                one_sided.append(case.id)
            continue
        cand, base = cells[(candidate, case.id)], cells[(baseline, case.id)]
        pair = paired_table(tally, cand, base)
        result = _compare_case(
            case, case_stats[(candidate, case.id)], case_stats[(baseline, case.id)], pair
        )
        results.append(result)
        if not cand.counted or not base.counted:
            result.reason = "an agent has no counted run"
            continue
        shared.append(case)
        result.difference = cand.rate - base.rate
        result.p_value = case_p_value(cand, base, pair)
    _decide_cases(results, config)
    overall, _ = compare_group(SUITE_GROUP, shared, cells, config)
    tags = [compare_group(tag, tagged, cells, config) for tag, tagged in tag_groups(shared)]
    _decide_tags(tags, config)
    return Comparison(
        baseline=baseline,
        candidate=candidate,
        overall=overall,
        tags=[tag for tag, _ in tags],
        cases=results,
        warnings=_warnings(results, one_sided),
        paired_cases=sum(1 for r in results if r.paired),
    )


def without_cases(
    comparison: Comparison, case_ids: Collection[str], config: GateConfig
) -> Comparison:
    """The comparison with `case_ids` left out: their rows dropped and the suite and tag
    groups computed again, as `compare` computes them, over the other cases' counts.

    What the gates decide on while cases are quarantined; the reported comparison keeps
    every case.
    """
    if not case_ids:
        return comparison
    kept = [row for row in comparison.cases if row.case_id not in case_ids]
    cells: Cells = {}
    shared: list[Case] = []
    for row in kept:
        if row.difference is None:
            continue
        for side in (row.candidate, row.baseline):
            cells[(side.agent, row.case_id)] = Cell(
                passes=side.passes, fails=side.fails, errors=side.errors, excluded=side.excluded
            )
        metadata = {"tags": row.tags, "priority": row.priority}
        shared.append(Case(len(shared), row.case_id, row.description, {}, [], metadata=metadata))
    tags = [compare_group(tag, tagged, cells, config) for tag, tagged in tag_groups(shared)]
    _decide_tags(tags, config)
    return replace(
        comparison,
        overall=compare_group(SUITE_GROUP, shared, cells, config)[0],
        tags=[tag for tag, _ in tags],
        cases=kept,
    )


def _warnings(results: list[CaseComparison], one_sided: list[str]) -> list[str]:
    warnings = []
    errored = [r for r in results if r.candidate.errors or r.baseline.errors]
    if errored:
        warnings.append(
            f"{len(errored)} case(s) had errored runs, counted as failed runs unless their "
            "kind is excluded"
        )
    if one_sided:
        shown = ", ".join(one_sided[:3]) + (", ..." if len(one_sided) > 3 else "")
        warnings.append(
            f"{len(one_sided)} case(s) were run by only one agent and are left out of the "
            f"comparison: {shown}"
        )
    return warnings


def tag_groups(cases: Sequence[Case]) -> list[tuple[str, list[Case]]]:
    """Cases by tag, tags in sorted order."""
    by_tag: dict[str, list[Case]] = {}
    for case in cases:
        for tag in case.tags:
            by_tag.setdefault(tag, []).append(case)
    return sorted(by_tag.items())


class GroupTest(Protocol):
    """A test of the difference of mean per-case pass rates over a group of cases: the
    stratified score test on these cases (`stats.StratifiedDifference`) or the t test on
    tasks like these (`stats.CaseMeanDifference`)."""

    @property
    def estimate(self) -> float:
        """The candidate's mean per-case pass rate minus the baseline's."""
        ...

    @property
    def standard_error(self) -> float:
        """The estimate's standard error, for display."""
        ...

    def limit(self, level: float, side: Side) -> float:
        """One-sided confidence limit at `level`."""
        ...

    def p_value(self, null: float, alternative: Literal["less", "greater"]) -> float:
        """One-sided p-value of H0: difference = `null`."""
        ...


def _counts(cand: Sequence[Cell], base: Sequence[Cell]) -> tuple[list[int], ...]:
    return (
        [c.passes for c in cand],
        [c.counted for c in cand],
        [b.passes for b in base],
        [b.counted for b in base],
    )


def counts_test(
    estimand: str,
    candidate_passes: Sequence[int],
    candidate_runs: Sequence[int],
    baseline_passes: Sequence[int],
    baseline_runs: Sequence[int],
) -> GroupTest:
    """The candidate-minus-baseline test of per-case counts for `estimand`: the stratified
    score test on these cases, or the t test on tasks like these (two cases or more)."""
    counts = (candidate_passes, candidate_runs, baseline_passes, baseline_runs)
    if estimand == "tasks":
        return stats.case_mean_difference(*counts)
    return stats.stratified_difference(*counts)


def group_difference(cases: Sequence[Case], cells: Cells, config: GateConfig) -> GroupTest:
    """The candidate-minus-baseline test over `cases` for the configuration's estimand."""
    candidate, baseline = roles(config)
    counts = _counts(
        [cells[(candidate, c.id)] for c in cases], [cells[(baseline, c.id)] for c in cases]
    )
    return counts_test(config.estimand, *counts)


def group_rows(comparison: Comparison, tag: str | None = None) -> list[CaseComparison]:
    """The compared cases of the suite (`tag` None) or of one tag: those both agents ran."""
    return [
        row
        for row in comparison.cases
        if row.difference is not None and (tag is None or tag in row.tags)
    ]


def group_test(group: GroupComparison, rows: Sequence[CaseComparison]) -> GroupTest | None:
    """The test a group comparison decides on, over its compared cases `rows`
    (`group_rows`); None when there is none (no case, or one case on tasks like these)."""
    if group.difference is None or not rows:
        return None
    if group.estimand == "tasks":
        if group.standard_error is None or group.df is None:
            return None
        return stats.CaseMeanDifference(
            group.difference, group.standard_error, group.df, group.df + 1
        )
    return counts_test(
        "cases",
        [r.candidate.passes for r in rows],
        [r.candidate.counted for r in rows],
        [r.baseline.passes for r in rows],
        [r.baseline.counted for r in rows],
    )


def two_sided_p(difference: GroupTest) -> float:
    """Two-sided p-value of no difference: twice the smaller one-sided one."""
    return min(1.0, 2 * min(difference.p_value(0.0, "less"), difference.p_value(0.0, "greater")))


def limits(difference: GroupTest, level: float) -> Interval:
    """The two-sided interval of a group's test at `level`."""
    side = two_sided(level)
    return difference.limit(side, "lower"), difference.limit(side, "upper")


def compare_group(
    group: str, cases: Sequence[Case], cells: Cells, config: GateConfig
) -> tuple[GroupComparison, GroupTest | None]:
    """The difference of mean per-case pass rates over `cases` (counted by both agents),
    decided at the confidence level (tags are decided again across tags by Holm), with
    the test it was decided on."""
    result = GroupComparison(
        group=group,
        cases=len(cases),
        baseline_rate=None,
        candidate_rate=None,
        difference=None,
        interval=None,
        verdict="insufficient data",
        estimand=config.estimand,
    )
    if not cases:
        result.explanation = f"no case in {_where(group)} has counted runs from both agents"
        return result, None
    candidate, baseline = roles(config)
    cand = [cells[(candidate, c.id)] for c in cases]
    base = [cells[(baseline, c.id)] for c in cases]
    result.candidate_rate = sum(c.rate for c in cand) / len(cand)
    result.baseline_rate = sum(b.rate for b in base) / len(base)
    result.difference = result.candidate_rate - result.baseline_rate
    if len(cases) > 1:
        result.correlation = stats.pearson_correlation(
            [c.rate for c in cand], [b.rate for b in base]
        )
    if config.estimand == "tasks":
        if len(cases) < 2:
            result.explanation = (
                f"{_where(group)} has one case: a difference over tasks like these needs at "
                "least two"
            )
            return result, None
        result.fixed_suite_interval = limits(
            stats.stratified_difference(*_counts(cand, base)), config.confidence
        )
    difference = group_difference(cases, cells, config)
    result.standard_error = difference.standard_error
    result.df = len(cases) - 1 if config.estimand == "tasks" else None
    result.p_value = result.p_adjusted = two_sided_p(difference)
    _apply_group_verdict(result, difference, config.confidence, 1, config)
    return result, difference


def _decide_tags(tags: list[tuple[GroupComparison, GroupTest | None]], config: GateConfig) -> None:
    """Holm across the tags: each tag's interval at the level of its deciding step."""
    tested = [(tag, test) for tag, test in tags if test is not None and tag.p_value is not None]
    if not tested:
        return
    alpha = 1 - config.confidence
    p_values = [tag.p_value for tag, _ in tested if tag.p_value is not None]
    for (tag, test), q, level in zip(
        tested, stats.holm(p_values), stats.holm_confidences(p_values, alpha), strict=True
    ):
        tag.p_adjusted = q
        _apply_group_verdict(tag, test, level, len(tested), config)


def _where(group: str) -> str:
    return "the suite" if group == SUITE_GROUP else f"tag {group}"


def _apply_group_verdict(
    result: GroupComparison,
    difference: GroupTest,
    level: float,
    family: int,
    config: GateConfig,
) -> None:
    """Interval at `level`, the verdict it shows, and a sentence a developer can act on."""
    assert result.p_value is not None and result.p_adjusted is not None
    result.level = level
    result.interval = limits(difference, level)
    low, high = result.interval
    result.verdict = verdict_of(result.interval, config)
    where = f"{_where(result.group)}, {about(result.estimand, result.cases)}"
    if difference.estimate < 0:
        change = f"candidate lost {-difference.estimate:.2f} [{-high:.2f}, {-low:.2f}] on {where}"
    else:
        change = f"candidate gained {difference.estimate:.2f} [{low:.2f}, {high:.2f}] on {where}"
    reason = verdict_reason(
        result.verdict, result.p_value, result.p_adjusted, level, (family, "tag"), config
    )
    result.explanation = f"{change}: {result.verdict}; {reason}"
