"""Reports that list every run read the runs back from the store, a case or a row at a time:
an evaluation run with a store keeps no run in memory, and its JSON, JSONL, CSV, JUnit and
HTML reports are those of the same evaluation with every run kept. Past
`reports.html_run_details` runs, the HTML report details the runs that did not pass and says
where the rest are."""

from __future__ import annotations

import collections
import csv
import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from evals.cli import main
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.model.suite import ReportSettings
from evals.pipeline import evaluation
from evals.pipeline.evaluation import run_evaluation
from evals.reports import html
from evals.reports.writers import renderer_for, write_report
from evals.suite import load_suite

pytestmark = pytest.mark.slow

FORMATS = ("out.json", "out.jsonl", "out.csv", "out.yaml", "out.junit.xml", "out.md", "out.html")


def _project(tmp_path: Path) -> Path:
    """A team's suite: 20 cases of their own, two echo agents, one case in three failing."""
    tests = [
        {
            "description": f"ticket {i}",
            "vars": {"ticket": f"refund request {i}"},
            "assert": [
                {"type": "contains", "value": "refund"},
                {"type": "equals", "value": f"refund request {i}" if i % 3 else "escalate"},
            ],
        }
        for i in range(20)
    ]
    config = {
        "description": "support triage",
        "prompts": ["{{ticket}}"],
        "providers": [{"id": "echo", "label": "current"}, {"id": "echo", "label": "next"}],
        "gates": {"baseline": "current", "candidate": "next"},
        "tests": tests,
    }
    path = tmp_path / "triage" / "promptfooconfig.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(config))
    return path


def _counts(result: EvaluationResult) -> list[tuple[object, ...]]:
    """Each case's and agent's counts and interval: what does not depend on latencies."""
    return [
        (s.case_id, s.agent, s.runs, s.passes, s.fails, s.errors, s.pass_rate, s.interval)
        for s in result.summary.case_stats
    ]


def _shown_runs(page: str) -> dict[str, int]:
    """How many runs the HTML report details, by status."""
    found = re.findall(r'<summary><span class="status-\w+">(\w+)</span>', page)
    return dict(collections.Counter(found))


def test_reports_read_from_the_store_equal_those_of_the_kept_runs(tmp_path):
    suite = load_suite(_project(tmp_path))
    store = f"sqlite:///{tmp_path / 'results.db'}"
    options = RunOptions(repeat=3, store_url=store, progress=False, keep_records=True)
    kept = run_evaluation(suite, options)
    assert len(kept.records) == 20 * 3 * 2
    streamed = dataclasses.replace(kept, records=[])
    assert streamed.runs is not None
    for name in FORMATS:
        write_report(tmp_path / "kept" / name, kept)
        write_report(tmp_path / "streamed" / name, streamed)
        ours = (tmp_path / "streamed" / name).read_text(encoding="utf-8")
        assert ours == (tmp_path / "kept" / name).read_text(encoding="utf-8"), name
    lines = (tmp_path / "streamed" / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 120
    table = list(csv.reader(io.StringIO((tmp_path / "streamed" / "out.csv").read_text("utf-8"))))
    assert len(table) == 1 + 20 * 3  # one line per test and repeat, both agents' columns


def test_an_evaluation_that_keeps_no_run_has_the_counts_of_one_that_does(tmp_path):
    suite = load_suite(_project(tmp_path))
    store = f"sqlite:///{tmp_path / 'results.db'}"
    options = RunOptions(repeat=3, store_url=store, progress=False, keep_records=False)
    streamed = run_evaluation(suite, options)
    assert streamed.records == [] and streamed.runs is not None
    kept = run_evaluation(suite, dataclasses.replace(options, keep_records=True))
    assert _counts(streamed) == _counts(kept)
    assert streamed.gates.verdict == kept.gates.verdict


@pytest.mark.parametrize("in_memory", [0, None])
def test_cli_writes_every_report_with_output_piped(tmp_path, monkeypatch, capsys, in_memory):
    """From the store (`--runs-in-memory 0`: no run kept), and from memory (80 runs are
    fewer than the default 5000)."""
    suite = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    kept = []
    run = evaluation.run_evaluation

    def spy(*args, **kwargs):  # what the command line had the pipeline keep
        result = run(*args, **kwargs)
        kept.append(bool(result.records))
        return result

    monkeypatch.setattr(evaluation, "run_evaluation", spy)
    outputs = [str(tmp_path / "reports" / name) for name in FORMATS]
    arguments = ["run", str(suite), "--repeat", "2", "--no-progress"]
    if in_memory is not None:
        arguments += ["--runs-in-memory", str(in_memory)]
    code = main([*arguments, *(f"-o{out}" for out in outputs)])
    assert code in (0, 1)
    assert kept == [in_memory is None]
    capsys.readouterr()
    document = json.loads(Path(outputs[0]).read_text(encoding="utf-8"))
    rows = document["results"]["results"]
    assert len(rows) == 20 * 2 * 2
    jsonl = [json.loads(line) for line in Path(outputs[1]).read_text("utf-8").splitlines()]
    assert [r["testIdx"] for r in jsonl] == [r["testIdx"] for r in rows]
    assert [r["success"] for r in jsonl] == [r["success"] for r in rows]
    failed = sum(not r["success"] for r in rows)
    assert failed == 7 * 2 * 2  # cases 0, 3, ..., 18 fail on every run of both agents
    assert len(yaml.safe_load(Path(outputs[3]).read_text("utf-8"))["results"]["results"]) == 80
    page = Path(outputs[6]).read_text(encoding="utf-8")
    assert _shown_runs(page) == {"PASS": 13 * 2 * 2, "FAIL": 7 * 2 * 2}  # below the cap


def test_html_past_its_cap_details_the_runs_that_did_not_pass(tmp_path):
    suite = load_suite(_project(tmp_path))
    store = f"sqlite:///{tmp_path / 'results.db'}"
    result = run_evaluation(
        suite, RunOptions(repeat=3, store_url=store, progress=False, keep_records=False)
    )
    result.suite.reports = ReportSettings(html_run_details=30)
    page = html.render_html(result)
    assert "120 runs: shown here are the 30 that did not pass (at most 30)" in page
    assert "the other 90 are in the results store" in page
    assert _shown_runs(page) == {"FAIL": 30}
    result.suite.reports = ReportSettings(html_run_details=120)
    whole = html.render_html(result)
    assert "shown here are the" not in whole
    assert _shown_runs(whole) == {"PASS": 78, "FAIL": 42}


@pytest.mark.parametrize("name", ["out.jsonl", "out.csv", "out.json", "out.yaml"])
def test_a_report_is_written_in_parts_not_held_whole(tmp_path, name):
    suite = load_suite(_project(tmp_path))
    store = f"sqlite:///{tmp_path / 'results.db'}"
    result = run_evaluation(
        suite, RunOptions(repeat=3, store_url=store, progress=False, keep_records=False)
    )
    parts = renderer_for(Path(name))(result)
    assert not isinstance(parts, str)
    assert sum(1 for _ in parts) > 3


def test_a_report_of_runs_neither_kept_nor_stored_is_an_error(tmp_path):
    suite = load_suite(_project(tmp_path))
    options = RunOptions(repeat=1, use_store=False, progress=False, keep_records=False)
    result = run_evaluation(suite, options)
    with pytest.raises(SuiteError, match="kept none of its 40 runs and stored none"):
        write_report(tmp_path / "out.jsonl", result)
    assert not (tmp_path / "out.jsonl").exists()
