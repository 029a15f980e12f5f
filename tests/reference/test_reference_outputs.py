"""The built-in suites' verdicts, intervals and reports, from their recorded runs, are the
ones `capture.py` recorded: the analysis and the report writers change no number, no
verdict and no byte of a report when they change how they read the runs.

Each case reads a suite's recorded store (`<name>/results.db.gz`), analyses its runs with
the gate configuration of the recorded environment and the recorded decision time, and
compares the summary and the gate report with `expected.json` field by field, then renders
every report format and compares its SHA-256 (the Markdown and terminal summaries as text).

Sums of costs and the intra-class correlation are taken per case as runs arrive, so they
may differ from a sum over every run in the last bits of a float: numbers agree within a
relative 1e-12 (`CLOSE`), everything else (counts, verdicts, every interval, p-value and
level, every text report) exactly. The JSON and YAML documents, whose `evals` key holds
the summary, are compared the same way once parsed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.reference.capture import documents, normalized

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NAMES = sorted(p.name for p in HERE.iterdir() if (p / "expected.json").is_file())

pytestmark = pytest.mark.slow

CLOSE = 1e-12
AGAIN = (
    " (a report meant to change: `python tests/reference/capture.py --again` records it again;"
    " review the diff of expected.json)"
)


def assert_close(found: Any, expected: Any, where: str = "") -> None:
    """`found` equals `expected`, floats within a relative CLOSE."""
    if isinstance(expected, float) and isinstance(found, float):
        assert math.isclose(found, expected, rel_tol=CLOSE, abs_tol=1e-300), f"{where}{AGAIN}"
    elif isinstance(expected, dict):
        assert isinstance(found, dict) and found.keys() == expected.keys(), f"{where}{AGAIN}"
        for key, value in expected.items():
            assert_close(found[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(found, list) and len(found) == len(expected), where
        for index, value in enumerate(expected):
            assert_close(found[index], value, f"{where}[{index}]")
    else:
        assert found == expected, f"{where}{AGAIN}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _stored_result(name: str, tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    """The recorded evaluation analysed again, and what was recorded of it."""
    from evals.pipeline.evaluation import stored_result
    from evals.suite.loader import load_suite

    expected = json.loads((HERE / name / "expected.json").read_text(encoding="utf-8"))
    database = tmp_path / "results.db"
    with gzip.open(HERE / name / "results.db.gz", "rb") as packed, database.open("wb") as raw:
        shutil.copyfileobj(packed, raw)
    suite = load_suite(ROOT / expected["suite"])
    result = stored_result(
        suite,
        f"sqlite:///{database}",
        name,
        expected["environment"],
        now=expected["gates"]["decided_at"],
    )
    return result, expected


@pytest.mark.parametrize("name", NAMES)
def test_verdicts_and_intervals_are_the_recorded_ones(name: str, tmp_path: Path) -> None:
    result, expected = _stored_result(name, tmp_path)
    assert_close(result.summary.to_dict(), expected["summary"], "summary")
    assert_close(result.gates.to_dict(), expected["gates"], "gates")


@pytest.mark.parametrize("name", NAMES)
def test_reports_are_the_recorded_ones(name: str, tmp_path: Path) -> None:
    from rich.console import Console

    from evals.reports.terminal import render_body
    from evals.reports.writers import write_report

    result, expected = _stored_result(name, tmp_path)
    console = Console(file=io.StringIO(), width=200, color_system=None)
    render_body(result, console)
    terminal = normalized(console.file.getvalue())  # type: ignore[attr-defined]
    assert terminal == expected["texts"]["terminal"], f"the terminal summary differs{AGAIN}"
    for report, digest in expected["reports"].items():
        if report == "terminal":
            continue
        target = tmp_path / "reports" / report
        write_report(target, result)
        text = normalized(target.read_text(encoding="utf-8"))
        if report in expected["texts"]:
            assert text == expected["texts"][report], f"{report} of {name} differs{AGAIN}"
        if _digest(text) == digest:
            continue
        assert report in expected["documents"], (
            f"{report} of {name} differs from the recorded one{AGAIN}"
        )
        recorded = expected["documents"][report]
        found = documents({report: text}, (report,))[report]
        assert found["rest"] == recorded["rest"], (
            f"{report} of {name} differs beyond its evals key{AGAIN}"
        )
        assert_close(found["evals"], recorded["evals"], f"{report}.evals")
