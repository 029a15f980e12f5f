"""A comparison of two stored evaluations reads their runs from the store a batch at a
time and keeps none (`evals compare`, the nightly against its baseline): its statistics,
gates and every report equal those of the same comparison over runs held in memory, when
the two suites list their shared cases in the same order and when a newer suite moved
them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from ci_suite import write_ci_suite

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.pipeline.history import Side, compare_sides
from evals.reports.writers import write_report
from evals.store.stored_runs import StoredRuns
from evals.suite import load_suite

pytestmark = pytest.mark.slow

REPORTS = ("out.json", "out.jsonl", "out.csv", "out.junit.xml", "out.md", "out.html")


def _reordered(path: Path) -> Path:
    """The suite with its cases in reverse order and one more (a newer version of it)."""
    head, _, tests = path.read_text(encoding="utf-8").partition("tests:\n")
    cases = tests.split("  - ")[1:]
    extra = "description: case new\n    vars: {question: 'q-new'}\n"
    moved = path.with_name("moved.yaml")
    moved.write_text(head + "tests:\n" + "".join(f"  - {c}" for c in [extra, *cases[::-1]]))
    return moved


@pytest.mark.parametrize("moved", [False, True])
def test_a_comparison_read_from_the_store_equals_one_over_runs_in_memory(
    tmp_path: Path, moved: bool
) -> None:
    old = write_ci_suite(tmp_path / "suite", cases=7)
    new = _reordered(old) if moved else old
    store = str(tmp_path / "results.db")
    runs: dict[str, object] = {}
    for name, path, seed in (("before", old, 1), ("after", new, 2)):
        options = RunOptions(store_url=store, progress=False, seed=seed, evaluation_id=name)
        runs[name] = run_evaluation(load_suite(path), options)
    before, after = runs["before"], runs["after"]
    suite = load_suite(new)
    outlines = {id(before): load_suite(old).outline(), id(after): suite.outline()}
    config = suite.gates.for_environment("nightly")

    def sides(held: bool) -> tuple[Side, Side]:
        return tuple(  # type: ignore[return-value]
            Side(
                r.meta,
                outlines[id(r)],
                r.records if held else [],
                "candidate",
                None if held else StoredRuns(store, r.meta.id),
            )
            for r in (before, after)
        )

    labels = ("candidate@baseline", "candidate@tonight")
    compared = {
        held: compare_sides(
            suite, *sides(held), config, "nightly", allow_suite_change=True, labels=labels
        )
        for held in (True, False)
    }
    streamed, listed = compared[False], compared[True]
    assert streamed.records == [] and len(listed.records) == 7 * 4 + (8 if moved else 7) * 4
    assert streamed.summary.to_dict() == listed.summary.to_dict()
    assert streamed.gates.to_dict() == listed.gates.to_dict()
    assert streamed.repeat == listed.repeat == 4
    fixed = {"compared_at": 0.0}
    for result in (streamed, listed):
        result.meta = dataclasses.replace(result.meta, config={**result.meta.config, **fixed})
    for name in REPORTS:
        write_report(tmp_path / "read" / name, streamed)
        write_report(tmp_path / "held" / name, listed)
        read = (tmp_path / "read" / name).read_text(encoding="utf-8")
        assert read == (tmp_path / "held" / name).read_text(encoding="utf-8"), name
