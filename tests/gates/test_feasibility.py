"""Gates that cannot decide are named before the run, and the names hold: a row said to be
unable to fail does not fail a total break when the gates decide it, a row said to be able
to fail does; likewise for passing when every run of both agents passes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.gates.feasibility import undecidable
from evals.model.gates import GateConfig
from evals.pipeline.evaluation import analyse
from validation.beta_binomial import outcome_records, simulated_suite, tagged_cases


def _decided(cases, config: GateConfig, repeats: int, broken: bool) -> dict[str, str]:
    suite = simulated_suite(cases)
    suite.gates = config
    shape = (len(cases), repeats)
    records = [
        *outcome_records("base", np.ones(shape, dtype=bool)),
        *outcome_records(
            "cand", np.zeros(shape, dtype=bool) if broken else np.ones(shape, dtype=bool)
        ),
    ]
    _, report = analyse(suite, records, config, None)
    return {g.name: g.status for g in report.gates}


@settings(max_examples=12)
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
def test_what_is_named_before_the_run_is_what_the_gates_do(
    cases, tags, p0, repeats, tolerance, tag_tolerance, minimum, estimand
):
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
    broken = _decided(suite_cases, config, repeats, broken=True)
    same = _decided(suite_cases, config, repeats, broken=False)
    for row in ("regression", *(f"regression[t{i}]" for i in range(tags)), "p0_regressions"):
        if row not in broken or (row == "p0_regressions" and not p0):
            continue
        assert ((row, "fail") in named) == (broken[row] != "fail"), row
        assert ((row, "pass") in named) == (same[row] != "pass"), row
    if minimum is not None:
        assert (("min_pass_rate", "fail") in named) == (broken["min_pass_rate"] != "fail")
        assert (("min_pass_rate", "pass") in named) == (same["min_pass_rate"] != "pass")


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
    assert _decided(cases, config, p0.needed, broken=True)["p0_regressions"] == "fail"
    assert _decided(cases, config, p0.needed - 1, broken=True)["p0_regressions"] != "fail"


@pytest.mark.parametrize("rule, named", [("pass", False), ("fail", True)])
def test_rows_that_cannot_pass_are_named_only_where_that_matters(rule, named):
    suite = simulated_suite(tagged_cases(10))
    suite.gates = GateConfig(baseline="base", candidate="cand", repeat=5, on_undetermined=rule)
    sides = {(u.row, u.side) for u in undecidable(suite, None)}
    assert (("regression", "pass") in sides) is named
