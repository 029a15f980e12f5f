"""`regression` and `regression[tag]`: the candidate's loss against the baseline, over the
suite and per tag, within the tolerated loss (`max_regression`, else `margin`).

Non-inferiority: a row fails when the data show the loss beyond the tolerance, passes
when they show it within, and is undetermined otherwise. Each uses the test the
comparison reports for its group (`evals.analysis.comparison.group_test`); the per-tag
rows are one Holm family.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from evals.analysis.comparison import group_test
from evals.gates.families import Hypothesis, Levels, gate_result, judge_family, limits_sentence
from evals.gates.registry import Evidence, Gate, Scope, tag_row, tagged_cases, tags_with
from evals.model.gates import GateConfig
from evals.model.summary import GateResult, GroupComparison

TOLERANCE_KEYS = {"max_regression", "margin"}


def points(value: float) -> str:
    """A difference of pass rates in signed points (-5.0 pp)."""
    return f"{value * 100 + 0.0:+.1f} pp"


def _group_hypothesis(group: GroupComparison, tolerance: float) -> Hypothesis | None:
    difference = group_test(group)
    if difference is None:
        return None
    return Hypothesis(
        label=group.group,
        measured=difference.estimate,
        limit=difference.limit,
        threshold=-tolerance,
        fail_p=partial(difference.p_value, -tolerance, "less"),
    )


def regression_gates(
    names: Sequence[str],
    groups: Sequence[GroupComparison],
    tolerances: Sequence[float],
    levels: Levels,
) -> list[GateResult]:
    """One row per group, Holm across the groups at one share (the suite is a family of
    one; the per-tag rows share one family)."""
    hypotheses = [_group_hypothesis(g, t) for g, t in zip(groups, tolerances, strict=True)]
    tested = [h for h in hypotheses if h is not None]
    judged = iter(judge_family(tested, levels))
    results = []
    for name, group, tolerance, hypothesis in zip(
        names, groups, tolerances, hypotheses, strict=True
    ):
        if hypothesis is None:
            results.append(
                GateResult(
                    name, "undetermined", -tolerance, group.difference, None, group.explanation
                )
            )
            continue
        decided = next(judged)
        where = "the suite" if group.group == "suite" else f"tag {group.group}"
        reason = (
            f"candidate − baseline {points(hypothesis.measured)} over {group.cases} cases of "
            f"{where}, tolerated loss {tolerance:.3g}: "
            f"{limits_sentence(decided, points, len(tested))}"
        )
        results.append(gate_result(name, decided, levels, reason))
    return results


def _suite_family(scope: Scope) -> list[str] | None:
    return ["suite"] if scope.compared else None


def _decide_suite(evidence: Evidence, levels: Levels) -> list[GateResult]:
    assert evidence.comparison is not None
    return regression_gates(
        [SUITE.name], [evidence.comparison.overall], [evidence.config.tolerance()], levels
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
    groups = {t.group: t for t in evidence.comparison.tags}
    tags = tags_with(config, frozenset(groups), TOLERANCE_KEYS)
    return regression_gates(
        [tag_row(TAGS.name, t) for t in tags],
        [groups[t] for t in tags],
        [_tag_tolerance(config, t) for t in tags],
        levels,
    )


SUITE = Gate(
    name="regression",
    keys=("max_regression", "margin"),
    statistical=True,
    family=_suite_family,
    decide=_decide_suite,
)
TAGS = Gate(
    name="regression[tag]",
    keys=("per_tag.max_regression", "per_tag.margin"),
    statistical=True,
    family=_tag_family,
    decide=_decide_tags,
    reads=tagged_cases,
)
