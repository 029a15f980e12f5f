"""Shards merged give exactly the unsharded evaluation: counts, verdicts, gates."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from ci_suite import write_ci_suite

from evals.cli import main
from evals.model.options import RunOptions
from evals.pipeline.evaluation import analyse, run_evaluation
from evals.pipeline.merge import merge_records, merge_shards, read_shards
from evals.reports.writers import write_report
from evals.store import open_store
from evals.suite import load_suite

pytestmark = pytest.mark.slow


def _per_case(result) -> dict:
    return {
        (stats.case_id, stats.agent): (stats.runs, stats.passes, stats.fails, stats.errors)
        for stats in result.summary.case_stats
    }


def _verdicts(result) -> dict:
    comparison = result.summary.comparison
    return {case.case_id: case.verdict for case in comparison.cases}


def _runs(result) -> list:
    records = result.records or list(result.runs.iter_runs())
    return sorted((r.key.as_tuple(), r.status, r.seed, r.response.output) for r in records)


def test_three_shards_merge_to_the_unsharded_evaluation(tmp_path: Path) -> None:
    suite_path = write_ci_suite(tmp_path / "suite")
    suite = load_suite(suite_path)
    whole = run_evaluation(suite, RunOptions(store_url=str(tmp_path / "whole.db"), progress=False))
    for index in (1, 2, 3):
        run_evaluation(
            load_suite(suite_path),
            RunOptions(
                store_url=str(tmp_path / f"shard-{index}.db"),
                shard=(index, 3),
                evaluation_id="nightly-3",
                progress=False,
            ),
        )
    shards = [str(tmp_path / f"shard-{i}.db") for i in (1, 2, 3)]
    merged = merge_shards(shards, store_url=str(tmp_path / "merged.db")).result
    assert merged.records == [] and merged.runs is not None  # no run held: read back
    assert _runs(merged) == _runs(whole)
    assert _per_case(merged) == _per_case(whole)
    assert _verdicts(merged) == _verdicts(whole)
    assert merged.gates.to_dict()["verdict"] == whole.gates.to_dict()["verdict"]
    assert merged.gates.warnings == []

    store = open_store(str(tmp_path / "merged.db"))
    try:
        stored = store.get_evaluation("nightly-3")
        assert stored is not None and stored.shard is None and stored.status == "complete"
        assert len(store.load_runs("nightly-3")) == len(whole.records)
    finally:
        store.close()


def _shard_run(suite_path: Path, tmp_path: Path, index: int, count: int, ident: str) -> Path:
    store = tmp_path / f"{ident}-s{index}.db"
    code = main(
        [
            "run",
            str(suite_path),
            "--shard",
            f"{index}/{count}",
            "--evaluation-id",
            ident,
            "--store",
            str(store),
            "-o",
            str(store.with_suffix(".json")),
            "--quiet",
            "--no-progress",
        ]
    )
    assert code in (0, 1)
    return store


def test_merge_of_json_shards_with_one_missing_is_incomplete_even_when_quiet(
    tmp_path: Path, capsys
) -> None:
    suite_path = write_ci_suite(tmp_path / "suite", cases=3)
    shards = [_shard_run(suite_path, tmp_path, i, 3, "e1") for i in (1, 2)]
    capsys.readouterr()
    code = main(
        [
            "merge",
            str(tmp_path / "m.json"),
            *(str(s.with_suffix(".json")) for s in shards),
            "-o",
            str(tmp_path / "m.md"),
            "--quiet",
        ]
    )
    assert code == 3
    planned = 3 * 2 * 4
    stored = sum(1 for i in range(planned) if i % 3 != 2)
    warning = f"shard(s) 3/3 missing: {stored} of {planned} planned runs merged"
    assert warning in capsys.readouterr().err
    markdown = (tmp_path / "m.md").read_text(encoding="utf-8")
    assert warning in markdown
    assert "evaluation `e1`" in markdown


def test_merge_with_a_missing_shard_stores_an_incomplete_evaluation_never_a_baseline(
    tmp_path: Path, capsys
) -> None:
    suite_path = write_ci_suite(tmp_path / "suite", cases=4)
    shards = [_shard_run(suite_path, tmp_path, i, 3, "n1") for i in (1, 3)]
    history = tmp_path / "history.db"

    code = main(["merge", str(history), *map(str, shards), "--quiet"])

    assert code == 3
    assert "incomplete" in capsys.readouterr().err
    store = open_store(str(history))
    try:
        meta = store.get_evaluation("n1")
        assert meta is not None and meta.status == "incomplete" and meta.shard is None
        assert meta.planned_runs == 4 * 2 * 4
        assert (
            meta.stored_runs
            == len(store.load_runs("n1"))
            == sum(1 for i in range(4 * 2 * 4) if i % 3 != 1)
        )
        assert store.baselines(meta.suite_id, environment=None, branch=None) == []
    finally:
        store.close()


def test_merge_refuses_an_unsharded_input_and_names_it(tmp_path: Path, capsys) -> None:
    suite_path = write_ci_suite(tmp_path / "suite", cases=2)
    shard = _shard_run(suite_path, tmp_path, 1, 2, "e2")
    whole = tmp_path / "whole.db"
    run_evaluation(
        load_suite(suite_path),
        RunOptions(store_url=str(whole), evaluation_id="e2", progress=False),
    )
    whole_json = tmp_path / "whole.json"
    assert main(["run", str(suite_path), "--no-store", "-o", str(whole_json), "--quiet"]) in (0, 1)

    for unsharded in (whole, whole_json):
        capsys.readouterr()
        code = main(["merge", str(tmp_path / "out.db"), str(shard), str(unsharded), "--quiet"])
        assert code == 2
        err = capsys.readouterr().err
        assert f"{unsharded} holds evaluation" in err and "ran unsharded" in err
    assert not (tmp_path / "out.db").exists()


def test_merge_refuses_shards_of_different_evaluations_or_counts(tmp_path: Path, capsys) -> None:
    suite_path = write_ci_suite(tmp_path / "suite", cases=2)
    first = _shard_run(suite_path, tmp_path, 1, 2, "a")
    other_id = _shard_run(suite_path, tmp_path, 2, 2, "b")
    other_count = _shard_run(suite_path, tmp_path, 2, 3, "a")

    capsys.readouterr()
    assert main(["merge", str(tmp_path / "o.db"), str(first), str(other_id)]) == 2
    err = capsys.readouterr().err
    assert "differ in evaluation id" in err
    assert f"{first}: shard 1/2 has a" in err and f"{other_id}: shard 2/2 has b" in err

    assert main(["merge", str(tmp_path / "o.db"), str(first), str(other_count)]) == 2
    err = capsys.readouterr().err
    assert "differ in shard count" in err and f"{other_count}: shard 2/3 has 3" in err


REPORTS = ("out.json", "out.jsonl", "out.csv", "out.junit.xml", "out.md", "out.html")


@pytest.mark.parametrize("paired", [False, True])
def test_a_merge_read_from_the_stores_equals_the_merge_of_runs_in_memory(
    tmp_path: Path, paired: bool
) -> None:
    """The merge counts the shards' runs as it reads them and keeps none; its statistics,
    gates and every report equal those of the shards' runs held in memory and analysed
    as a list (how merging worked before), paired tables included."""
    suite_path = write_ci_suite(tmp_path / "suite", cases=8)
    if paired:
        text = suite_path.read_text(encoding="utf-8")
        suite_path.write_text(
            text.replace("  min_pass_rate: 0.3\n", "  min_pass_rate: 0.3\n  paired: true\n")
        )
    for index in (1, 2, 3):
        options = RunOptions(
            store_url=str(tmp_path / f"shard-{index}.db"),
            shard=(index, 3),
            evaluation_id="nightly-7",
            progress=False,
        )
        run_evaluation(load_suite(suite_path), options)
    shards = [str(tmp_path / f"shard-{i}.db") for i in (1, 2, 3)]
    merged = merge_shards(shards, store_url=str(tmp_path / "merged.db")).result
    assert merged.records == []
    suite = load_suite(suite_path)
    held = merge_records(suite, read_shards(shards), merged.repeat)
    assert len(held) == 8 * 4 * 2
    summary, gates = analyse(suite, held, merged.gate_config, merged.meta.environment)
    assert merged.summary.to_dict() == summary.to_dict()
    assert merged.gates.to_dict() == gates.to_dict()
    if paired:
        assert merged.summary.comparison is not None
    in_memory = dataclasses.replace(merged, records=held, facts=None, counts=None, runs=None)
    for name in REPORTS:
        write_report(tmp_path / "read" / name, merged)
        write_report(tmp_path / "held" / name, in_memory)
        read = (tmp_path / "read" / name).read_text(encoding="utf-8")
        assert read == (tmp_path / "held" / name).read_text(encoding="utf-8"), name
