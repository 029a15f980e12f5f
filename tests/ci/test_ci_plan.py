"""The pull request's repeats from the power plan, and what its summary says it can see."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from git_project import make_project

from evals.analysis.power import build_power_plan
from evals.ci.pr_plan import plan_pull_request
from evals.gates.catalog import planned_gate_count
from evals.suite import load_suite


def _suite(tmp_path: Path):
    return load_suite(make_project(tmp_path))


def _drop(notes: list[str]) -> float:
    found = re.search(r"finds a drop of ([0-9.]+) in pass rate", notes[-1])
    assert found is not None, notes[-1]
    return float(found.group(1))


def test_an_effect_takes_the_fewest_repeats_with_the_plans_power(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    kwargs = {"cases": 24, "repeats": 2, "final_repeats": None, "max_repeats": 20}

    plan = plan_pull_request(suite, effect=0.3, nightly=None, **kwargs)

    model = build_power_plan(
        suite, gates=planned_gate_count(suite, "pr"), environment="pr", cases=24, effect=0.3
    )
    chosen = plan.repeats
    assert model.probability(24, chosen, 0.3, "fail") >= model.power
    assert chosen == 1 or model.probability(24, chosen - 1, 0.3, "fail") < model.power
    assert plan.notes[0] == f"repeats from the power plan for a drop of 0.3: {chosen}"


@pytest.mark.slow
def test_a_drop_too_small_for_the_cap_runs_the_cap_and_says_what_it_needs(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path)

    capped = plan_pull_request(
        suite,
        cases=24,
        repeats=2,
        final_repeats=None,
        effect=0.01,
        max_repeats=20,
        nightly=None,
    )

    assert capped.repeats == 20
    assert "needs more than 20 repeats with 24 cases" in capped.notes[0]


@pytest.mark.slow
def test_the_power_note_describes_the_last_stage_and_more_repeats_see_smaller_drops(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path)

    def note(final: int | None) -> list[str]:
        return plan_pull_request(
            suite,
            cases=24,
            repeats=3,
            final_repeats=final,
            effect=None,
            max_repeats=20,
            nightly=None,
        ).notes

    three, twelve = note(None), note(12)
    assert len(three) == 1 and "24 case(s) × 3 repeat(s)" in three[0]
    assert "24 case(s) × 12 repeat(s)" in twelve[0]
    assert "defaults (no stored nightly)" in three[0]
    assert _drop(twelve) < _drop(three)


def test_an_icc_that_rounding_left_above_zero_plans_as_cases_alike() -> None:
    from evals.stats.power import _case_rate_quantiles, minimum_detectable_drop

    # A nightly whose cases all pass alike estimates its ICC at 0 up to rounding (7e-17);
    # the plan treats it as 0 instead of inverting a Beta with parameters near 1e16
    # (a minute per call, half an hour for one plan).
    rates = _case_rate_quantiles(0.9833, 6.9e-17)
    assert rates.min() == rates.max() == 0.9833
    rounded = minimum_detectable_drop(20, 3, 0.9833, 6.9e-17, 0.1, 0.025)
    assert rounded == minimum_detectable_drop(20, 3, 0.9833, 0.0, 0.1, 0.025)
