"""Shards merged give exactly the unsharded evaluation: counts, verdicts, gates."""

from __future__ import annotations

from pathlib import Path

from ci_suite import write_ci_suite

from evals.cli import main
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.pipeline.merge import merge_shards, store_merged
from evals.store import open_store
from evals.suite import load_suite


def _per_case(result) -> dict:
    return {
        (stats.case_id, stats.agent): (stats.runs, stats.passes, stats.fails, stats.errors)
        for stats in result.summary.case_stats
    }


def _verdicts(result) -> dict:
    comparison = result.summary.comparison
    return {case.case_id: case.verdict for case in comparison.cases}


def _runs(result) -> list:
    return sorted((r.key.as_tuple(), r.status, r.seed, r.response.output) for r in result.records)


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
    merged = merge_shards(shards)
    assert _runs(merged) == _runs(whole)
    assert _per_case(merged) == _per_case(whole)
    assert _verdicts(merged) == _verdicts(whole)
    assert merged.gates.to_dict()["verdict"] == whole.gates.to_dict()["verdict"]
    assert merged.gates.warnings == []

    store_merged(merged, str(tmp_path / "merged.db"))
    store = open_store(str(tmp_path / "merged.db"))
    try:
        stored = store.get_evaluation("nightly-3")
        assert stored is not None and stored.shard is None and stored.status == "complete"
        assert len(store.load_runs("nightly-3")) == len(whole.records)
    finally:
        store.close()


def test_merge_command_reads_json_shards_and_warns_about_a_missing_shard(
    tmp_path: Path, capsys
) -> None:
    suite_path = write_ci_suite(tmp_path / "suite", cases=3)
    for index in (1, 2):
        code = main(
            [
                "run",
                str(suite_path),
                "--shard",
                f"{index}/3",
                "--evaluation-id",
                "e1",
                "--store",
                str(tmp_path / f"s{index}.db"),
                "-o",
                str(tmp_path / f"s{index}.json"),
                "--quiet",
                "--no-progress",
            ]
        )
        assert code in (0, 1)
    code = main(
        [
            "merge",
            str(tmp_path / "m.json"),
            str(tmp_path / "s1.json"),
            str(tmp_path / "s2.json"),
            "-o",
            str(tmp_path / "m.md"),
            "--quiet",
        ]
    )
    assert code in (0, 1)
    markdown = (tmp_path / "m.md").read_text(encoding="utf-8")
    assert "planned run(s) are in no shard" in markdown
    assert "evaluation `e1`" in markdown
