"""The pull request's repeats from the power plan, and what its summary says it can see."""

from __future__ import annotations

import re
from pathlib import Path

from git_project import make_project

from evals.analysis.power import build_power_plan
from evals.pipeline.ci_plan import plan_pull_request
from evals.suite import load_suite


def _suite(tmp_path: Path):
    return load_suite(make_project(tmp_path))


def _mde(notes: list[str]) -> float:
    found = re.search(r"finds a change of ([0-9.]+) in pass rate", notes[-1])
    assert found is not None
    return float(found.group(1))


def test_an_effect_takes_the_repeats_the_plan_needs(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    kwargs = {"cases": 24, "repeats": 2, "final_repeats": None, "max_repeats": 20}

    plan = plan_pull_request(suite, effect=0.3, confidence=0.95, nightly=None, **kwargs)

    needed = build_power_plan(suite, cases=24, repeats=2, effect=0.3).repeats_for_target(True)
    assert needed is not None and plan.repeats == needed <= 20
    assert f"repeats from the power plan for a difference of 0.3: {needed}" == plan.notes[0]
    capped = plan_pull_request(suite, effect=0.01, confidence=0.95, nightly=None, **kwargs)
    wider = build_power_plan(suite, cases=24, repeats=20, effect=0.01).cases_for_target(True, 20)
    assert capped.repeats == 20
    assert f"capped at 20, where it needs {wider} cases" in capped.notes[0]


def test_the_power_note_describes_the_last_stage_and_more_repeats_see_smaller_changes(
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
            confidence=0.95,
            nightly=None,
        ).notes

    three, twelve = note(None), note(12)
    assert len(three) == 1 and "24 case(s) × 3 repeat(s)" in three[0]
    assert "24 case(s) × 12 repeat(s)" in twelve[0]
    assert "defaults (no stored nightly)" in three[0]
    assert _mde(twelve) < _mde(three)
