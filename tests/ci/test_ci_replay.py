"""Regrading stored runs without the agents, and the opt-in response cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ci_suite import write_ci_suite

from evals.cli import main
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.store import open_store
from evals.suite import load_suite


def _calls(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("CALLS_FILE", str(calls))
    monkeypatch.chdir(tmp_path)
    return calls


def test_regrade_applies_the_changed_suite_without_calling_agents(
    tmp_path: Path, counted: Path
) -> None:
    suite_path = write_ci_suite(tmp_path / "suite")
    db = str(tmp_path / "results.db")
    source = run_evaluation(load_suite(suite_path), RunOptions(store_url=db, progress=False))
    changed = suite_path.read_text(encoding="utf-8").replace('value: "yes"', 'value: "no"')
    assert changed != suite_path.read_text(encoding="utf-8")
    new_suite = suite_path.with_name("changed.yaml")
    new_suite.write_text(changed, encoding="utf-8")
    before = _calls(counted)

    out = tmp_path / "regraded.json"
    code = main(
        [
            "regrade",
            source.meta.id,
            "--suite",
            str(new_suite),
            "--store",
            db,
            "-o",
            str(out),
            "--quiet",
        ]
    )

    assert _calls(counted) == before
    document = json.loads(out.read_text(encoding="utf-8"))
    assert code == (0 if document["evals"]["gates"]["passed"] else 1)
    regraded_id = document["evals"]["evaluationId"]
    store = open_store(db)
    try:
        meta = store.get_evaluation(regraded_id)
        regraded = {r.key.as_tuple(): r for r in store.load_runs(regraded_id)}
        original = {r.key.as_tuple(): r for r in store.load_runs(source.meta.id)}
    finally:
        store.close()
    assert meta is not None and meta.config["regraded_from"] == source.meta.id
    assert regraded.keys() == original.keys()
    for key, record in regraded.items():
        assert record.response.output == original[key].response.output
        expected = "pass" if "no" in record.response.output.lower() else "fail"
        assert record.status == expected
        assert original[key].status == ("fail" if expected == "pass" else "pass")


def test_cache_is_opt_in_and_keyed_by_repeat(tmp_path: Path, counted: Path) -> None:
    suite_path = write_ci_suite(tmp_path / "suite", cases=3)
    runs = 3 * 2 * 4

    def run(**options: object):
        return run_evaluation(
            load_suite(suite_path), RunOptions(use_store=False, progress=False, **options)
        )

    first = run(cache=True)
    assert _calls(counted) == runs
    assert (tmp_path / ".evals" / "cache" / "responses.db").exists()
    second = run(cache=True)
    assert _calls(counted) == runs
    assert all(r.response.cached for r in second.records)
    assert sorted(
        (r.key.as_tuple(), r.status, r.response.output) for r in second.records
    ) == sorted((r.key.as_tuple(), r.status, r.response.output) for r in first.records)
    run(cache=True, repeat=5)
    assert _calls(counted) == runs + 3 * 2
    run()
    assert _calls(counted) == runs + 3 * 2 + runs
