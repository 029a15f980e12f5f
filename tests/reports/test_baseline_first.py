"""Every report states the baseline first: each format is read back and its order checked
against the data, for a suite that lists its candidate first (the reports must not follow
the suite's order) and whose baseline and candidate rates differ."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import html5lib
import pytest
from rich.console import Console

from evals.model.ci import CiOutcome
from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.reports import render_terminal, text, write_report
from evals.reports.ci import render_ci_comment
from evals.suite import load_suite

AGENT = """
def shipped(prompt, options, context):
    return {"output": "ok " + prompt}


def proposed(prompt, options, context):
    return {"output": ("nope " if prompt.startswith("refund") else "ok ") + prompt}
"""

CASES = ["refund-a100", "refund-b200", "refund-c300", "lookup-a100", "lookup-b200"]


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> EvaluationResult:
    """A real evaluation of `proposed` (listed first) against the baseline `shipped`."""
    folder = tmp_path_factory.mktemp("baseline-first")
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    tests = "\n".join(
        f"  - description: {name}\n    vars: {{q: {name}}}\n"
        f"    metadata: {{tags: [{name.split('-')[0]}]}}\n"
        "    assert: [{type: starts-with, value: ok}]"
        for name in CASES
    )
    (folder / "suite.yaml").write_text(
        "prompts: ['{{q}}']\n"
        "providers:\n"
        "  - {id: file://agent.py:proposed, label: proposed}\n"
        "  - {id: file://agent.py:shipped, label: shipped}\n"
        "gates: {baseline: shipped, candidate: proposed, min_pass_rate: 0.9}\n"
        "evaluateOptions: {repeat: 4}\n"
        f"tests:\n{tests}\n",
        encoding="utf-8",
    )
    evaluation = run_evaluation(
        load_suite(folder / "suite.yaml"), RunOptions(use_store=False, progress=False)
    )
    overall = evaluation.summary.comparison.overall  # type: ignore[union-attr]
    assert overall.baseline_rate == 1.0 and overall.candidate_rate == pytest.approx(0.4)
    assert evaluation.meta.agents == ["proposed", "shipped"]
    return evaluation


def _rates(result: EvaluationResult) -> tuple[str, str]:
    overall = result.summary.comparison.overall  # type: ignore[union-attr]
    return text.percent(overall.baseline_rate), text.percent(overall.candidate_rate)


def _failed(result: EvaluationResult) -> list[str]:
    return [g.name for g in result.gates.gates if g.blocking and g.status == "fail"]


def _plain(element: ET.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def _rows(table: ET.Element) -> list[list[str]]:
    """A table's rows as the text of their cells."""
    return [[_plain(cell) for cell in row if cell.tag in ("th", "td")] for row in table.iter("tr")]


def test_html_states_the_baseline_first_and_explains_every_failed_gate(
    result: EvaluationResult, tmp_path: Path
) -> None:
    write_report(tmp_path / "r.html", result)
    page = html5lib.parse((tmp_path / "r.html").read_text("utf-8"), namespaceHTMLElements=False)
    paragraphs = [_plain(p) for p in page.iter("p")]
    baseline, candidate = _rates(result)
    overall = next(p for p in paragraphs if p.startswith("Overall:"))
    assert overall.startswith(f"Overall: {baseline} (baseline) vs {candidate} (candidate),")
    failed = next(p for p in paragraphs if p.startswith("Failed:"))
    assert _failed(result) and all(f"{name}:" in failed for name in _failed(result))
    tables = [_rows(table) for table in page.iter("table")]
    agents = next(rows for rows in tables if rows[0][:3] == ["Agent", "Cases", "Runs"])
    assert [row[0] for row in agents[1:]] == ["shipped", "proposed"]
    cases = next(rows for rows in tables if rows[0][:2] == ["Case", "Description"])
    assert cases[0][4:6] == ["shipped", "proposed"]
    refund = next(row for row in cases if row[0] == "refund-a100")
    assert [cell.split()[0] for cell in refund[4:6]] == ["4/4", "0/4"]


def test_markdown_states_the_baseline_first(result: EvaluationResult, tmp_path: Path) -> None:
    write_report(tmp_path / "r.md", result)
    markdown = (tmp_path / "r.md").read_text("utf-8")
    baseline, candidate = _rates(result)
    assert f"**shipped** (baseline) vs **proposed** (candidate): {baseline} vs {candidate}," in (
        markdown
    )
    costs = markdown.split("### Cost and latency", 1)[1]
    assert costs.index("| shipped |") < costs.index("| proposed |")
    failed = next(line for line in markdown.splitlines() if line.startswith("**Failed**"))
    assert all(f"`{name}`" in failed for name in _failed(result))


def test_the_terminal_states_the_baseline_first(result: EvaluationResult) -> None:
    buffer = io.StringIO()
    render_terminal(result, Console(file=buffer, width=200, color_system=None))
    lines = buffer.getvalue().splitlines()
    header = next(line for line in lines if line.lstrip().startswith("Case "))
    assert header.index("shipped") < header.index("proposed")
    tag_header = next(line for line in lines if line.lstrip().startswith("Tag "))
    assert tag_header.index("shipped") < tag_header.index("proposed")
    suite_row = next(line for line in lines if line.lstrip().startswith("suite "))
    assert suite_row.split()[2:4] == list(_rates(result))
    refund = next(line for line in lines if line.lstrip().startswith("refund-a100 "))
    assert refund.split()[1:5] == ["4/4", "51–100%", "0/4", "0–49%"]


def test_the_json_reports_evals_key_states_the_baseline_first(
    result: EvaluationResult, tmp_path: Path
) -> None:
    write_report(tmp_path / "r.json", result)
    section = json.loads((tmp_path / "r.json").read_text("utf-8"))["evals"]
    keys = list(section)
    assert keys.index("baseline") < keys.index("candidate")
    assert (section["baseline"], section["candidate"]) == ("shipped", "proposed")
    comparison = section["summary"]["comparison"]
    assert list(comparison)[:2] == ["baseline", "candidate"]
    assert (comparison["baseline"], comparison["candidate"]) == ("shipped", "proposed")
    overall = list(comparison["overall"])
    assert overall.index("baseline_rate") < overall.index("candidate_rate")
    assert comparison["overall"]["baseline_rate"] == 1.0
    case = list(comparison["cases"][0])
    assert case.index("baseline") < case.index("candidate")
    assert comparison["cases"][0]["baseline"]["agent"] == "shipped"
    assert [a["agent"] for a in section["summary"]["agents"]] == ["shipped", "proposed"]


def test_junit_states_the_baseline_first(result: EvaluationResult, tmp_path: Path) -> None:
    write_report(tmp_path / "r.xml", result)
    root = ET.parse(tmp_path / "r.xml").getroot()
    suites = [s.get("name", "").rsplit(" / ", 1)[1] for s in root.iter("testsuite")]
    assert suites == ["shipped", "proposed", "gates"]
    messages = [
        f.get("message", "")
        for f in root.iter("failure")
        if "regression on" in f.get("message", "")
    ]
    assert messages
    for message in messages:
        assert re.search(r"; shipped: 4/4 passed.* vs proposed: 0/4 passed", message)


def test_the_ci_comment_states_the_baseline_first(result: EvaluationResult) -> None:
    outcome = CiOutcome(
        kind="pr", suite_id=result.meta.suite_id, verdict="fail", exit_code=1, results=[result]
    )
    comment = render_ci_comment(outcome)
    baseline, candidate = _rates(result)
    assert f"**shipped** (baseline) vs **proposed** (candidate): {baseline} vs {candidate}," in (
        comment
    )
    regressed = [line for line in comment.splitlines() if line.startswith("- case `refund-")]
    assert regressed and all("4/4 → 0/4" in line for line in regressed)
