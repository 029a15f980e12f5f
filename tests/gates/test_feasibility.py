"""Gates that cannot decide are named before the run, and the names hold: a row said to be
unable to fail does not fail a total break of its own cases when the gates decide it, a row
said to be able to fail does; likewise for passing when every run of both agents passes.

A break of the row's cases alone is what the warning speaks of (a per-tag row is there to
catch its tag breaking while the others hold): when every tag breaks at once, the other
rows of its Holm family are shown first and it is tested at a later, easier step. Likewise
the suite's and the tags' regression rows are one graph: a row named unable to fail may
still fail once another row of the graph failed first and passed its share on, but then
the build was red without it, so it still cannot turn the build red.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.gates.feasibility import undecidable
from evals.model.gates import GateConfig
from evals.model.suite import Case
from evals.pipeline.evaluation import analyse
from validation.beta_binomial import outcome_records, simulated_suite, tagged_cases


def _decided(
    cases: Sequence[Case], config: GateConfig, repeats: int, broken: Collection[str] = ()
) -> dict[str, str]:
    """Each row's status when the candidate fails every run of the `broken` cases and
    both agents pass every other run."""
    suite = simulated_suite(cases)
    suite.gates = config
    shape = (len(cases), repeats)
    candidate = np.ones(shape, dtype=bool)
    for index, case in enumerate(cases):
        if case.id in broken:
            candidate[index] = False
    records = [
        *outcome_records("base", np.ones(shape, dtype=bool)),
        *outcome_records("cand", candidate),
    ]
    _, report = analyse(suite, records, config, None)
    return {g.name: g.status for g in report.gates}


def _row_cases(row: str, cases: Sequence[Case]) -> set[str]:
    """The cases a row is about: a tag's for `regression[tag]`, the P0 cases for
    `p0_regressions`, every case otherwise."""
    if row.startswith("regression["):
        tag = row[len("regression[") : -1]
        return {c.id for c in cases if tag in c.tags}
    if row == "p0_regressions":
        return {c.id for c in cases if c.metadata.get("priority") == "P0"}
    return {c.id for c in cases}


def _named_rows_hold(
    cases: int,
    tags: int,
    p0: int,
    repeats: int,
    tolerance: float,
    tag_tolerance: float,
    minimum: float | None,
    estimand: str,
) -> None:
    suite_cases = tagged_cases(cases, tags=tags, p0=range(p0))
    config = GateConfig(
        baseline="base",
        candidate="cand",
        max_regression=tolerance,
        min_pass_rate=minimum,
        estimand=estimand,
        repeat=repeats,
        on_undetermined="fail",
        per_tag={f"t{i}": {"max_regression": tag_tolerance} for i in range(tags)},
    )
    suite = simulated_suite(suite_cases)
    suite.gates = config
    named = {(u.row, u.side) for u in undecidable(suite, None)}
    same = _decided(suite_cases, config, repeats)
    rows = ["regression", *(f"regression[t{i}]" for i in range(tags))]
    if p0:
        rows.append("p0_regressions")
    if minimum is not None:
        rows.append("min_pass_rate")
    graph = [r for r in rows if r.startswith("regression")]
    for row in (r for r in rows if r in same):
        broken = _decided(suite_cases, config, repeats, _row_cases(row, suite_cases))
        others = [r for r in graph if r != row and r in broken] if row in graph else []
        turns_red = broken[row] == "fail" and not any(broken[r] == "fail" for r in others)
        if (row, "fail") in named:
            assert not turns_red, row
        else:
            assert broken[row] == "fail", row
        assert ((row, "pass") in named) == (same[row] != "pass"), row


@pytest.mark.parametrize(
    "cases, tags, p0, repeats, tolerance, tag_tolerance, minimum, estimand",
    [
        # A one-case tag at 4 repeats cannot fail alone, though it fails when every tag
        # breaks (its Holm family's other rows are shown first).
        (4, 3, 0, 4, 0.0, 0.1, None, "cases"),
        (10, 2, 2, 3, 0.05, 0.1, 0.9, "cases"),
        (8, 2, 1, 5, 0.0, 0.3, 0.5, "tasks"),
    ],
)
def test_what_is_named_before_the_run_is_what_the_gates_do(
    cases, tags, p0, repeats, tolerance, tag_tolerance, minimum, estimand
):
    _named_rows_hold(cases, tags, p0, repeats, tolerance, tag_tolerance, minimum, estimand)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    cases=st.integers(4, 16),
    tags=st.integers(1, 4),
    p0=st.integers(0, 3),
    repeats=st.integers(1, 8),
    tolerance=st.sampled_from([0.0, 0.05, 0.2, 0.5]),
    tag_tolerance=st.sampled_from([0.1, 0.3]),
    minimum=st.sampled_from([None, 0.5, 0.9]),
    estimand=st.sampled_from(["cases", "tasks"]),
)
def test_what_is_named_holds_for_any_design(
    cases, tags, p0, repeats, tolerance, tag_tolerance, minimum, estimand
):
    _named_rows_hold(cases, tags, p0, repeats, tolerance, tag_tolerance, minimum, estimand)


def test_the_repeats_named_make_the_row_decidable():
    cases = tagged_cases(10, tags=2, p0=range(2))
    config = GateConfig(
        baseline="base",
        candidate="cand",
        repeat=3,
        per_tag={"t0": {"max_regression": 0.1}, "t1": {"max_regression": 0.1}},
    )
    suite = simulated_suite(cases)
    suite.gates = config
    [p0] = [u for u in undecidable(suite, None) if u.row == "p0_regressions" and u.side == "fail"]
    assert p0.needed is not None and p0.needed > 3
    every = {c.id for c in cases}
    assert _decided(cases, config, p0.needed, every)["p0_regressions"] == "fail"
    assert _decided(cases, config, p0.needed - 1, every)["p0_regressions"] != "fail"


@pytest.mark.parametrize("rule, named", [("pass", False), ("fail", True)])
def test_rows_that_cannot_pass_are_named_only_where_that_matters(rule, named):
    suite = simulated_suite(tagged_cases(10))
    suite.gates = GateConfig(baseline="base", candidate="cand", repeat=5, on_undetermined=rule)
    sides = {(u.row, u.side) for u in undecidable(suite, None)}
    assert (("regression", "pass") in sides) is named
