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


@pytest.mark.slow
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


@pytest.mark.slow
def test_cache_misses_for_another_seed_and_never_answers_a_changed_agent(
    tmp_path: Path, counted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_path = write_ci_suite(tmp_path / "suite", cases=3)
    runs = 3 * 2 * 4

    def run(*extra: str) -> int:
        return main(["run", str(suite_path), "--no-store", "--quiet", "--cache", *extra])

    run()
    assert _calls(counted) == runs
    capsys.readouterr()
    run()
    assert _calls(counted) == runs
    assert f"{runs} of {runs} runs answered from the cache (100%)" in capsys.readouterr().err

    run("--seed", "7")
    assert _calls(counted) == 2 * runs
    assert f"0 of {runs} runs answered" in capsys.readouterr().err

    config = suite_path.read_text(encoding="utf-8")
    suite_path.write_text(
        config.replace("label: candidate}", "label: candidate, config: {temperature: 0.2}}"),
        encoding="utf-8",
    )
    run()
    assert _calls(counted) == 2 * runs + runs // 2
    assert "baseline 12/12, candidate 0/12" in capsys.readouterr().err

    agent = suite_path.with_name("agent.py")
    code = agent.read_text(encoding="utf-8")
    agent.write_text(code.replace('context["seed"], 5)', 'context["seed"], 6)'), "utf-8")
    assert agent.read_text(encoding="utf-8") != code
    run()
    assert _calls(counted) == 3 * runs + runs // 2
    assert "baseline 0/12, candidate 0/12" in capsys.readouterr().err
