"""`regression` and `regression[tag]`: the candidate's loss against the baseline, over the
suite and per tag, within the tolerated loss (`max_regression`, else `margin`).

Non-inferiority: a row fails when the data show the loss beyond the tolerance, passes
when they show it within, and is undetermined otherwise. Each uses the test the
comparison reports for its group (`evals.analysis.comparison.group_test`: the stratified
score test on these cases, or the t test on tasks like these).

The suite row and the per-tag rows are one graph (`GRAPH`): the weighted Holm procedure
(`evals.stats.weighted_holm`; Bretz et al. 2009) at the two gates' shares together, the
suite row starting with its gate's share and each tag with an equal part of its gate's.
A row shown beyond its tolerance passes what it held on to the others, so a tag that
broke is named at the suite's share once the suite's row failed, and the suite's row
gains what failed tags held. The first step of every row, what a row shown alone meets
(planning, `reach`, `detectable`), is its own share as before.

Every row says what it is about and the smallest loss this run would have caught
(`detectable`, 80 % of the time at the row's first step), so a pull request that shows no
loss says how large a loss it could have missed.
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
    comparison: Comparison,
    config: GateConfig,
    tags: Sequence[str],
    suite_share: float,
    tag_share: float,
    levels: Levels,
    suite_rows: bool,
) -> list[GateResult]:
    """The rows of one gate of the graph: the suite's (`suite_rows`) or the tags'. The
    graph holds the suite's row when `suite_share` is positive and one row per tag of
    `tags` when `tag_share` is, decided together by the weighted Holm procedure, the
    suite row starting at `suite_share` and each tested tag at `tag_share` over the tags
    tested. Each row reports its gate's share."""
    groups: list[tuple[str, str | None, float, float]] = []
    if suite_share > 0:
        groups.append((SUITE.name, None, config.tolerance(), suite_share))
    if tag_share > 0:
        groups += [(tag_row(TAGS.name, t), t, _tag_tolerance(config, t), tag_share) for t in tags]
    by_tag = {t.group: t for t in comparison.tags}
    found = []
    for name, tag, tolerance, share in groups:
        group = comparison.overall if tag is None else by_tag[tag]
        members = group_rows(comparison, tag)
        test = group_test(group, members)
        hypothesis = None if test is None else _group_hypothesis(group, test, tolerance)
        found.append((name, tag, tolerance, share, group, members, test, hypothesis))
    tested_tags = sum(1 for f in found if f[1] is not None and f[7] is not None)
    starts = [
        share if tag is None else share / tested_tags
        for _, tag, _, share, _, _, _, hypothesis in found
        if hypothesis is not None
    ]
    tested = [f[7] for f in found if f[7] is not None]
    judged = iter(judge_family(tested, replace(levels, share=sum(starts)), starts))
    first_steps = iter(starts)
    results = []
    for name, tag, tolerance, share, group, members, test, hypothesis in found:
        if hypothesis is not None:
            decided, first_step = next(judged), next(first_steps)
        if (tag is None) != suite_rows:
            continue
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
        catch = detectable(group, members, test, tolerance, 1 - first_step)
        scope = "the suite" if tag is None else f"tag {tag}"
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
        result = gate_result(name, decided, replace(levels, share=share), reason)
        family = tested_tags if tag is not None else None
        results.append(replace(result, about=where, detectable=catch, family=family))
    return results


def _suite_family(scope: Scope) -> list[str] | None:
    return ["suite"] if scope.compared else None


def _tag_tolerance(config: GateConfig, tag: str) -> float:
    return config.for_tag(tag).tolerance()


def _tag_family(scope: Scope) -> list[str] | None:
    if not scope.compared:
        return None
    return tags_with(scope.config, scope.compared_tags, TOLERANCE_KEYS) or None


def _graph_rows(evidence: Evidence, levels: Levels, suite_rows: bool) -> list[GateResult]:
    """The rows of the graph's suite gate (`suite_rows`) or tag gate at `levels`: its own
    share, the other gate holding the rest of `levels.pooled`."""
    assert evidence.comparison is not None
    config = evidence.config
    groups = frozenset(t.group for t in evidence.comparison.tags)
    tags = tags_with(config, groups, TOLERANCE_KEYS)
    pooled = levels.share if levels.pooled is None else levels.pooled
    other = pooled - levels.share if pooled - levels.share > 1e-12 * pooled else 0.0
    suite_share, tag_share = (levels.share, other) if suite_rows else (other, levels.share)
    return regression_gates(
        evidence.comparison, config, tags, suite_share, tag_share, levels, suite_rows
    )


def _decide_suite(evidence: Evidence, levels: Levels) -> list[GateResult]:
    return _graph_rows(evidence, levels, suite_rows=True)


def _decide_tags(evidence: Evidence, levels: Levels) -> list[GateResult]:
    return _graph_rows(evidence, levels, suite_rows=False)


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


GRAPH = "regression"
"""The graph the suite's and the tags' regression rows share their budget in."""

SUITE = Gate(
    name="regression",
    keys=("max_regression", "margin"),
    statistical=True,
    family=_suite_family,
    decide=_decide_suite,
    reach=_reach_suite,
    graph=GRAPH,
)
TAGS = Gate(
    name="regression[tag]",
    keys=("per_tag.max_regression", "per_tag.margin"),
    statistical=True,
    family=_tag_family,
    decide=_decide_tags,
    reads=tagged_cases,
    reach=_reach_tags,
    graph=GRAPH,
)
