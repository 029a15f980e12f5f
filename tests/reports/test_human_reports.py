"""JUnit, Markdown, HTML and terminal reports, the format dispatch and the progress bar."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from report_sample import XSS, sample_result
from rich.console import Console

from evals.model.errors import SuiteError
from evals.model.summary import GroupComparison
from evals.reports import render_terminal, write_report
from evals.reports.html import render_html
from evals.reports.markdown import render_markdown
from evals.reports.view import explanations
from evals.run.progress import Progress


def _junit(tmp_path: Path, name: str = "out.junit.xml") -> JUnitXml:
    path = tmp_path / name
    write_report(path, sample_result())
    return JUnitXml.fromfile(str(path))


@pytest.mark.parametrize("name", ["out.xml", "out.junit.xml"])
def test_junit_has_one_testcase_per_case_and_agent(tmp_path, name):
    suites = {s.name: s for s in _junit(tmp_path, name)}
    assert set(suites) == {"demo / baseline", "demo / candidate", "demo / gates"}
    for agent in ("baseline", "candidate"):
        cases = [c.name for c in suites[f"demo / {agent}"]]
        assert cases == ["greets", "fruit", "boom", "markup"]


def test_junit_failures_carry_interval_and_reason(tmp_path):
    suites = {s.name: s for s in _junit(tmp_path)}
    failed = {
        case.name: result
        for case in suites["demo / candidate"]
        for result in case.result
        if isinstance(result, (Failure, Error))
    }
    assert list(failed) == ["fruit"]  # the only case whose verdict is a regression
    assert "-100.0 pp" in failed["fruit"].message
    assert "[-100.0, -70.0] pp" in failed["fruit"].message
    assert "at 98.75 %, p = 0.04, q = 0.08" in failed["fruit"].message
    assert "significant after correcting for 4 cases" in failed["fruit"].message
    assert "repeat 0: fail — nope" in failed["fruit"].text
    assert not any(case.result for case in suites["demo / baseline"])
    gates = {c.name: c.result for c in suites["demo / gates"]}
    assert [type(r) for r in gates["min_pass_rate"]] == [Failure]
    assert "below 80.0%" in gates["min_pass_rate"][0].message
    assert gates["max_cost_ratio"] == [] and gates["max_flake_rate"] == []
    assert suites["demo / candidate"].failures == 1 and suites["demo / gates"].failures == 2


@pytest.mark.parametrize(("action", "kind"), [("warn", Skipped), ("fail", Failure)])
def test_junit_shows_an_undetermined_gate_as_the_environment_treats_it(tmp_path, action, kind):
    result = sample_result()
    result.gates.gates[0].status = "undetermined"
    result.gates.gates[1].status = "pass"
    result.gates.on_undetermined = action
    path = tmp_path / "undetermined.xml"
    write_report(path, result)
    suites = {s.name: s for s in JUnitXml.fromfile(str(path))}
    gates = {c.name: c.result for c in suites["demo / gates"]}
    assert [type(r) for r in gates["min_pass_rate"]] == [kind]
    assert f"on_undetermined: {action}" in gates["min_pass_rate"][0].message


def test_single_agent_junit_fails_cases_below_the_threshold(tmp_path):
    result = sample_result()
    result.summary.comparison = None
    result.meta.agents = ["candidate"]
    result.gate_config.baseline = None
    result.summary.case_stats = [s for s in result.summary.case_stats if s.agent == "candidate"]
    path = tmp_path / "single.xml"
    write_report(path, result)
    suites = {s.name: s for s in JUnitXml.fromfile(str(path))}
    failed = [c.name for c in suites["demo / candidate"] if c.result]
    assert failed == ["fruit"]  # interval [0 %, 30 %] lies below min_pass_rate 80 %


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_html_is_self_contained_and_escapes_outputs():
    page = render_html(sample_result())
    assert "http://" not in page and "https://" not in page
    collector = _Collector()
    collector.feed(page)
    tags = [tag for tag, _ in collector.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert XSS not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert tags.count("svg") == 2
    assert "details" in tags and "Trajectory (2 steps)" in page
    assert all(not (attrs.get("src") or "").strip() for _, attrs in collector.tags)


def test_html_shows_gates_regressions_and_intervals():
    page = render_html(sample_result())
    assert "P0 case fruit regressed" in page
    assert "Regressions (1)" in page
    assert "[60.0%, 100.0%]" in page
    assert "agent_error: agent crashed: boom" in page


def test_html_says_when_a_run_reported_no_tokens_never_0():
    """A run whose agent reported no usage (an error row, a fake model) is not shown as
    having used 0 tokens."""
    page = render_html(sample_result())
    assert "· 10 tokens" in page
    assert "· tokens not reported" in page
    assert "· 0 tokens" not in page


def test_markdown_starts_with_the_verdict_and_stays_short():
    lines = render_markdown(sample_result()).splitlines()
    assert lines[0] == "## ❌ Gate verdict (pr): FAIL"
    assert len(lines) <= 60
    headings = [line for line in lines if line.startswith("### ")]
    assert headings == [
        "### What changed",
        "### Gates",
        "### Regressions (1)",
        "### Cost and latency",
        "### Warnings",
    ]
    assert any(line.startswith("| `fruit` | P0 |") and "[-100, -70] pp" in line for line in lines)
    assert "| **change** | -50.0 pp | | +75.0% |" in "\n".join(lines)
    assert "Intervals at 98.75 %" in "\n".join(lines)


def test_markdown_escapes_table_pipes():
    result = sample_result()
    result.gates.gates[0].reason = "a | b"
    assert "a \\| b" in render_markdown(result)


def test_terminal_summary_fits_100_columns_without_colour():
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=False, color_system=None)
    render_terminal(sample_result(), console)
    output = buffer.getvalue()
    assert "\x1b[" not in output
    lines = output.rstrip("\n").splitlines()
    assert max(len(line) for line in lines) <= 100
    last_block = lines[len(lines) - lines[::-1].index("") :]
    assert last_block[0] == "❌ Gate verdict (pr): FAIL"
    assert last_block[-1] == "evaluation e0123456789a (not stored)"
    for case_id in ("greets", "fruit", "boom", "markup"):
        assert case_id in output
    assert output.index("Cases") < output.index("Suite and tags") < output.index("Gates")
    assert "regression" in output and "2/2 60–100%" in output


def test_terminal_colours_verdicts_on_a_terminal():
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=True, color_system="standard")
    render_terminal(sample_result(), console)
    assert re.search(r"\x1b\[[0-9;]*31m[^\x1b]*regression", buffer.getvalue())


def test_unknown_extension_is_an_input_error(tmp_path):
    with pytest.raises(SuiteError, match="unknown report format"):
        write_report(tmp_path / "out.pdf", sample_result())


def test_write_report_creates_parent_directories(tmp_path):
    target = tmp_path / "deep" / "dir" / "summary.md"
    write_report(target, sample_result())
    assert target.read_text(encoding="utf-8").startswith("## ❌")


def test_progress_logs_sparsely_in_ci():
    result = sample_result()
    buffer = io.StringIO()
    progress = Progress(5000, console=Console(file=buffer, force_terminal=False, width=200))
    for i in range(5000):
        progress.advance(result.records[i % len(result.records)])
    progress.close()
    statuses = [result.records[i % len(result.records)].status for i in range(5000)]
    expected = {s: statuses.count(s) for s in ("pass", "fail", "error")}
    lines = buffer.getvalue().splitlines()
    assert 2 <= len(lines) <= 13
    assert lines[-1].startswith(
        f"runs 5000/5000 (100%): {expected['pass']} pass, {expected['fail']} fail, "
        f"{expected['error']} error"
    )
    assert progress.counts == expected


def test_progress_bar_on_a_terminal_counts_and_clears():
    result = sample_result()
    buffer = io.StringIO()
    progress = Progress(16, console=Console(file=buffer, force_terminal=True, width=100))
    for record in result.records:
        progress.advance(record)
    progress.close()
    assert progress.done == 16 and progress.counts["error"] == 1


def test_disabled_progress_prints_nothing():
    buffer = io.StringIO()
    progress = Progress(3, enabled=False, console=Console(file=buffer))
    for record in sample_result().records[:3]:
        progress.advance(record)
    progress.close()
    assert buffer.getvalue() == "" and progress.done == 3


def test_every_report_explains_the_decided_verdicts_in_words():
    result = sample_result()
    comparison = result.summary.comparison
    comparison.tags[0].verdict = "regression"
    comparison.tags[0].explanation = "candidate lost 0.50 [0.10, 0.85] on tag smoke: regression"
    comparison.tags.append(
        GroupComparison("other", 2, 1.0, 1.0, 0.0, (-0.6, 0.6), "inconclusive", explanation="x")
    )
    expected = ["candidate lower on 2 of 4 cases", comparison.tags[0].explanation]
    assert explanations(result) == expected
    markdown = render_markdown(result)
    section = markdown.split("### What changed", 1)[1].split("###", 1)[0]
    assert [line[2:] for line in section.strip().splitlines()] == expected
    html = render_html(result)
    assert all(f"<li>{sentence}</li>" in html for sentence in expected)
    buffer = io.StringIO()
    render_terminal(result, Console(file=buffer, width=100, color_system=None))
    assert "• candidate lost 0.50 [0.10, 0.85] on tag smoke: regression" in buffer.getvalue()
    assert "• x" not in buffer.getvalue()
