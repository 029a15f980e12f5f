"""`regression` and `regression[tag]`: the candidate's loss against the baseline, over the
suite and per tag, within the tolerated loss (`max_regression`, else `margin`).

Non-inferiority: a row fails when the data show the loss beyond the tolerance, passes
when they show it within, and is undetermined otherwise. Each uses the test the
comparison reports for its group (`evals.analysis.comparison.group_test`: the stratified
score test on these cases, or the t test on tasks like these); the per-tag rows are one
Holm family. Every row says what it is about and the smallest loss this run would have
caught (`detectable`, 80 % of the time at the row's first Holm step), so a pull request
that shows no loss says how large a loss it could have missed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

from evals import stats
from evals.analysis.comparison import GroupTest, counts_test, group_rows, group_test
from evals.gates.families import Hypothesis, Levels, gate_result, judge_family, limits_sentence
from evals.gates.registry import (
    Design,
    Evidence,
    Gate,
    Reach,
    Scope,
    tag_row,
    tagged_cases,
    tags_with,
)
from evals.model.gates import GateConfig, about
from evals.model.summary import CaseComparison, Comparison, GateResult, GroupComparison

TOLERANCE_KEYS = {"max_regression", "margin"}
DETECTION_POWER = 0.8


def points(value: float) -> str:
    """A difference of pass rates in signed points (-5.0 pp)."""
    return f"{value * 100 + 0.0:+.1f} pp"


def detectable(
    group: GroupComparison,
    rows: Sequence[CaseComparison],
    test: GroupTest,
    tolerance: float,
    level: float,
) -> float | None:
    """The smallest loss of `group` this run would have shown beyond `tolerance` with
    probability 0.8 at one-sided `level`: on these cases from the baseline's per-case runs
    and the candidate's runs (`evals.stats.detectable_drop`), on tasks like these from the
    t test's standard error."""
    if group.estimand == "tasks":
        df = max(group.df or 1, 1)
        quantile = stats.t_quantile(level, df) + stats.normal_quantile(DETECTION_POWER)
        return tolerance + quantile * test.standard_error
    return stats.detectable_drop(
        [r.baseline.passes for r in rows],
        [r.baseline.counted for r in rows],
        [r.candidate.counted for r in rows],
        tolerance,
        level,
        DETECTION_POWER,
    )


def _group_hypothesis(
    group: GroupComparison, difference: GroupTest, tolerance: float
) -> Hypothesis:
    return Hypothesis(
        label=group.group,
        measured=difference.estimate,
        limit=difference.limit,
        threshold=-tolerance,
        fail_p=partial(difference.p_value, -tolerance, "less"),
    )


def regression_gates(
    names: Sequence[str],
    comparison: Comparison,
    tags: Sequence[str | None],
    tolerances: Sequence[float],
    levels: Levels,
) -> list[GateResult]:
    """One row per group of `comparison` (`tags`: None for the suite, else a tag), Holm
    across the groups at one share (the suite is a family of one; the per-tag rows share
    one family)."""
    by_tag = {t.group: t for t in comparison.tags}
    groups = [comparison.overall if tag is None else by_tag[tag] for tag in tags]
    rows = [group_rows(comparison, tag) for tag in tags]
    tests = [group_test(group, members) for group, members in zip(groups, rows, strict=True)]
    hypotheses = [
        None if test is None else _group_hypothesis(group, test, tolerance)
        for group, test, tolerance in zip(groups, tests, tolerances, strict=True)
    ]
    tested = [h for h in hypotheses if h is not None]
    judged = iter(judge_family(tested, levels))
    first_step = 1 - levels.share / max(len(tested), 1)
    results = []
    for name, group, members, test, tolerance, hypothesis in zip(
        names, groups, rows, tests, tolerances, hypotheses, strict=True
    ):
        where = about(group.estimand, group.cases)
        if hypothesis is None or test is None:
            results.append(
                GateResult(
                    name,
                    "undetermined",
                    -tolerance,
                    group.difference,
                    None,
                    group.explanation,
                    about=where,
                )
            )
            continue
        decided = next(judged)
        catch = detectable(group, members, test, tolerance, first_step)
        scope = "the suite" if group.group == "suite" else f"tag {group.group}"
        caught = (
            f"; this run would catch {points(-catch)} (80 % of the time)"
            if catch is not None
            else "; no loss of these cases could show at these runs"
        )
        reason = (
            f"candidate − baseline {points(hypothesis.measured)} on {scope}, {where}, "
            f"tolerated loss {tolerance:.3g}: "
            f"{limits_sentence(decided, points, len(tested))}{caught}"
        )
        result = gate_result(name, decided, levels, reason)
        results.append(replace(result, about=where, detectable=catch))
    return results


def _suite_family(scope: Scope) -> list[str] | None:
    return ["suite"] if scope.compared else None


def _decide_suite(evidence: Evidence, levels: Levels) -> list[GateResult]:
    assert evidence.comparison is not None
    return regression_gates(
        [SUITE.name], evidence.comparison, [None], [evidence.config.tolerance()], levels
    )


def _tag_tolerance(config: GateConfig, tag: str) -> float:
    return config.for_tag(tag).tolerance()


def _tag_family(scope: Scope) -> list[str] | None:
    if not scope.compared:
        return None
    return tags_with(scope.config, scope.compared_tags, TOLERANCE_KEYS) or None


def _decide_tags(evidence: Evidence, levels: Levels) -> list[GateResult]:
    assert evidence.comparison is not None
    config = evidence.config
    groups = frozenset(t.group for t in evidence.comparison.tags)
    tags = tags_with(config, groups, TOLERANCE_KEYS)
    return regression_gates(
        [tag_row(TAGS.name, t) for t in tags],
        evidence.comparison,
        tags,
        [_tag_tolerance(config, t) for t in tags],
        levels,
    )


def reachable(
    row: str, cases: int, runs: int, tolerance: float, estimand: str, levels: Levels
) -> Reach:
    """Whether a regression row over `cases` cases of `runs` runs per agent can fail (every
    run of the baseline passing, every run of the candidate failing) and can pass (every
    run of both passing) at `levels`."""
    if cases < (2 if estimand == "tasks" else 1):
        return Reach(row, can_fail=False, can_pass=False)
    full, none = [runs] * cases, [0] * cases
    broken = counts_test(estimand, none, [runs] * cases, full, [runs] * cases)
    same = counts_test(estimand, full, [runs] * cases, full, [runs] * cases)
    return Reach(
        row,
        can_fail=broken.limit(levels.fail_level, "upper") < -tolerance,
        can_pass=same.limit(levels.pass_level, "lower") >= -tolerance,
    )


def _reach_suite(design: Design) -> list[Reach]:
    config = design.scope.config
    return [
        reachable(
            SUITE.name,
            len(design.cases),
            design.runs,
            config.tolerance(),
            config.estimand,
            design.levels,
        )
    ]


def _reach_tags(design: Design) -> list[Reach]:
    config = design.scope.config
    return [
        reachable(
            tag_row(TAGS.name, tag),
            sum(tag in c.tags for c in design.cases),
            design.runs,
            _tag_tolerance(config, tag),
            config.estimand,
            design.levels,
        )
        for tag in _tag_family(design.scope) or ()
    ]


SUITE = Gate(
    name="regression",
    keys=("max_regression", "margin"),
    statistical=True,
    family=_suite_family,
    decide=_decide_suite,
    reach=_reach_suite,
)
TAGS = Gate(
    name="regression[tag]",
    keys=("per_tag.max_regression", "per_tag.margin"),
    statistical=True,
    family=_tag_family,
    decide=_decide_tags,
    reads=tagged_cases,
    reach=_reach_tags,
)
