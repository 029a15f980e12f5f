"""Comparisons recomputed from light stored rows match what the evaluation itself stored."""

from __future__ import annotations

import shutil

import pytest
from sqlalchemy import update

from evals.dashboard.comparison import Side, compare_sides
from evals.dashboard.selection import default_sides
from evals.model.errors import SuiteError
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.store import open_store
from evals.store.schema import evaluations
from evals.suite import load_suite

from .conftest import DEMO_SUITE


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_default_sides_are_the_comparison_the_newest_gates_made() -> None:
    rows = [_row("c", "pr", "feature"), _row("a", "nightly", "main")]
    assert default_sides(rows, ("baseline", "candidate")) == (
        Side("c", "baseline"),
        Side("c", "candidate"),
    )


def test_default_sides_without_a_stored_comparison_prefer_the_latest_nightly_on_main() -> None:
    rows = [_row("c", "pr", "feature"), _row("b", "pr", "main"), _row("a", "nightly", "main")]
    baseline, candidate = default_sides(rows, None)
    assert (baseline.evaluation_id, baseline.agent) == ("a", "candidate")
    assert (candidate.evaluation_id, candidate.agent) == ("c", "candidate")
    baseline, _ = default_sides(rows[:2], None)
    assert baseline.evaluation_id == "b"


def test_default_sides_of_one_evaluation_are_its_two_agents() -> None:
    baseline, candidate = default_sides([_row("a", None, None)], None)
    assert (baseline, candidate) == (Side("a", "baseline"), Side("a", "candidate"))
    assert default_sides([], None) is None


@pytest.fixture(scope="module")
def moved_suite_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(store URL, evaluation id) of a demo evaluation whose suite folder no longer exists."""
    folder = tmp_path_factory.mktemp("moved")
    suite_dir = folder / "suite"
    shutil.copytree(DEMO_SUITE, suite_dir, ignore=shutil.ignore_patterns("__pycache__"))
    url = f"sqlite:///{folder}/s.db"
    options = RunOptions(store_url=url, progress=False, repeat=1, environment="nightly")
    result = run_evaluation(load_suite(str(suite_dir)), options)
    shutil.rmtree(suite_dir)
    return url, result.meta.id


def _swapped(url: str, evaluation_id: str):
    store = open_store(url)
    try:
        return compare_sides(
            store, Side(evaluation_id, "candidate"), Side(evaluation_id, "baseline")
        )
    finally:
        store.close()


@pytest.mark.slow
def test_a_recomputed_comparison_needs_no_suite_file(moved_suite_store) -> None:
    swapped = _swapped(*moved_suite_store)

    assert swapped.recomputed
    gates = {g["name"]: g for g in swapped.gates["gates"]}
    assert gates["min_pass_rate"]["threshold"] == 0.6  # the suite's, stored with the runs
    assert gates["cost_ratio"]["threshold"] == 1.5
    cases = swapped.summary["comparison"]["cases"]
    assert {c["priority"] for c in cases} == {"P0", "P1", "P2"}
    assert any("inyeccion" in c["tags"] for c in cases)
    assert not swapped.warnings


@pytest.mark.slow
def test_an_evaluation_stored_without_an_outline_still_compares(
    moved_suite_store, tmp_path
) -> None:
    url, evaluation_id = moved_suite_store
    old = tmp_path / "old.db"
    shutil.copy(url.removeprefix("sqlite:///"), old)
    store = open_store(f"sqlite:///{old}")
    with store.engine.begin() as connection:
        connection.execute(update(evaluations).values(outline=None))
    store.close()

    swapped = _swapped(f"sqlite:///{old}", evaluation_id)

    assert any("without its gate thresholds" in w for w in swapped.warnings)
    assert "min_pass_rate" not in {g["name"] for g in swapped.gates["gates"]}
    cases = swapped.summary["comparison"]["cases"]
    assert {c["priority"] for c in cases} == {"P0", "P1", "P2"}  # recovered from the summary
    assert any("inyeccion" in c["tags"] for c in cases)
