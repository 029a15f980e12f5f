"""Comparisons recomputed from light stored rows match what the evaluation itself stored."""

from __future__ import annotations

import pytest

from evals.dashboard.comparison import Side, compare_sides
from evals.dashboard.selection import default_sides
from evals.model.errors import SuiteError
from evals.store import open_store


def test_light_records_reproduce_the_stored_comparison(demo_store) -> None:
    url, (_, latest) = demo_store
    store = open_store(url)
    try:
        stored = compare_sides(
            store, Side(latest.meta.id, "baseline"), Side(latest.meta.id, "candidate")
        )
        swapped = compare_sides(
            store, Side(latest.meta.id, "candidate"), Side(latest.meta.id, "baseline")
        )
    finally:
        store.close()
    assert not stored.recomputed and swapped.recomputed
    expected = latest.summary.comparison
    assert stored.summary["comparison"]["overall"]["difference"] == expected.overall.difference
    mirror = {"regression": "improvement", "improvement": "regression"}
    cases = {c["case_id"]: c for c in swapped.summary["comparison"]["cases"]}
    for case in expected.cases:
        assert cases[case.case_id]["p_value"] == pytest.approx(case.p_value)
        assert cases[case.case_id]["difference"] == pytest.approx(-case.difference)
        assert cases[case.case_id]["verdict"] == mirror.get(case.verdict, case.verdict)
    overall = swapped.summary["comparison"]["overall"]
    assert overall["difference"] == pytest.approx(-expected.overall.difference)


def test_the_same_runs_on_both_sides_are_refused(demo_store) -> None:
    url, (_, latest) = demo_store
    store = open_store(url)
    try:
        with pytest.raises(SuiteError):
            side = Side(latest.meta.id, "candidate")
            compare_sides(store, side, side)
    finally:
        store.close()


def _row(identifier: str, environment: str | None, branch: str | None) -> dict:
    return {
        "id": identifier,
        "environment": environment,
        "git_branch": branch,
        "agents": ["baseline", "candidate"],
    }


def test_default_sides_prefer_the_latest_nightly_on_main() -> None:
    rows = [_row("c", "pr", "feature"), _row("b", "pr", "main"), _row("a", "nightly", "main")]
    baseline, candidate = default_sides(rows, ("baseline", "candidate"))
    assert (baseline.evaluation_id, baseline.agent) == ("a", "candidate")
    assert (candidate.evaluation_id, candidate.agent) == ("c", "candidate")
    baseline, _ = default_sides(rows[:2], ("baseline", "candidate"))
    assert baseline.evaluation_id == "b"


def test_default_sides_of_one_evaluation_are_its_two_agents() -> None:
    baseline, candidate = default_sides([_row("a", None, None)], None)
    assert (baseline, candidate) == (Side("a", "baseline"), Side("a", "candidate"))
    assert default_sides([], None) is None
