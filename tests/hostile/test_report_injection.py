"""Text an agent or a dataset wrote cannot run, render or break anything in a report.

The payloads come from published lists: OWASP's XSS Filter Evasion cheat sheet (script
tags, event handlers, `javascript:` URLs, a tag closing the element it sits in), markdown
injection against pull-request comments (links and images to an attacker's server, mass
mentions, a `</details>` closing the comment's fold, a pipe and a newline breaking the
table), XML's own traps (a CDATA end, an entity declaration, characters XML 1.0 cannot hold:
NUL, the escape of terminal colours, a vertical tab, U+FFFE) and GitHub Actions' workflow
commands (`::error::`, `::add-mask::`) on a line of their own, and terminal escapes. Each
one is an agent's output and error and a dataset's description and tag; the reports a CI
job publishes must keep parsing and show the text as text.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from evals.reports.markdown import code_span, plain_text

PAYLOADS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "<svg/onload=alert(3)>",
    "[click me](javascript:alert(4))",
    "![pixel](https://attacker.example/pixel.png)",
    "@octocat @everyone",
    "</details></table><h1>owned</h1>",
    "a | b | c\n| --- |",
    "]]><!DOCTYPE x [<!ENTITY xxe SYSTEM 'file:///etc/passwd'>]>&xxe;",
    "NUL\x00 ESC\x1b[31m VT\x0b U+FFFE\ufffe end",
    "\n::error file=app.py,line=1::injected\n::add-mask::everything",
    "`code` ``` fence",
]

SUITE = """\
prompts: ['{{ q }}']
providers: [{id: file://agent.py, label: agent}]
tests: file://data.json
gates: {}
"""

AGENT = """\
import json

PAYLOADS = json.loads(open("payloads.json").read())


def call_api(prompt, options, context):
    n = int(context["vars"]["n"])
    if n % 2:
        return {"error": PAYLOADS[n]}
    return {"output": PAYLOADS[n]}
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One evaluation of the payloads (as outputs, errors, descriptions and tags), its
    reports written as a CI job writes them."""
    root = tmp_path_factory.mktemp("reports")
    rows = [
        {
            "description": f"row {n}: {payload}",
            "vars": {"q": payload, "n": n},
            "metadata": {"tags": [payload]},
            "assert": [{"type": "equals", "value": "expected"}],
        }
        for n, payload in enumerate(PAYLOADS)
    ]
    (root / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    (root / "payloads.json").write_text(json.dumps(PAYLOADS), encoding="utf-8")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    argv = ["run", "suite.yaml", "--no-store", "--no-progress"]
    argv += ["-o", "report.md", "-o", "report.junit.xml", "-o", "report.html"]
    done = subprocess.run(
        [sys.executable, "-m", "evals", *argv],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "GITHUB_ACTIONS": "true"},
    )
    assert done.returncode in (0, 1, 100), done.stderr[-3000:]
    (root / "terminal.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    (root / "stdout.txt").write_text(done.stdout, encoding="utf-8")
    return root


@pytest.mark.slow
def test_the_junit_report_parses_and_keeps_the_text(reports: Path) -> None:
    text = (reports / "report.junit.xml").read_text(encoding="utf-8")
    root = ET.fromstring(text)  # raises on any character XML cannot hold
    written = " ".join(" ".join([e.text or "", *e.attrib.values()]) for e in root.iter())
    assert "\\x1b[31m" in written and "\\x00" in written  # shown, as escapes
    assert "]]>" in written and "<!ENTITY" in written  # as text, never as markup
    assert "passwd" not in "".join(root.itertext()).replace("file:///etc/passwd", "")


@pytest.mark.slow
def test_the_markdown_report_renders_no_markup_from_the_data(reports: Path) -> None:
    markdown = (reports / "report.md").read_text(encoding="utf-8")
    assert "most often agent_error" in markdown  # an agent's error is quoted: not vacuous
    assert not re.search(r"(?<!\\)<(script|img|svg|h1|/table)", markdown)
    assert markdown.count("</details>") == markdown.count("<details>")
    assert not re.search(r"(?<!\\)\]\(", markdown)  # no link or image
    assert not re.search(r"(?<![\w\\])@(octocat|everyone)", markdown)
    tables: list[set[int]] = [set()]
    for line in markdown.splitlines():
        assert not line.startswith("::"), line
        if line.startswith("|"):  # every row of a table keeps the header's columns
            tables[-1].add(len(re.findall(r"(?<!\\)\|", line)))
        elif tables[-1]:
            tables.append(set())
    assert all(len(columns) <= 1 for columns in tables), tables


@pytest.mark.slow
def test_the_html_report_holds_the_text_escaped(reports: Path) -> None:
    page = (reports / "report.html").read_text(encoding="utf-8")
    for tag in ("<script>alert(1)", "<img src=x onerror", "<svg/onload", "<h1>owned"):
        assert tag not in page
    assert "&lt;script&gt;alert(1)" in page or "\\u003cscript\\u003ealert(1)" in page


@pytest.mark.slow
def test_the_terminal_shows_controls_and_pauses_workflow_commands(reports: Path) -> None:
    """Terminal escapes and NULs are shown as escapes; in GitHub Actions (the job ran with
    GITHUB_ACTIONS=true) every line printed sits between `::stop-commands::TOKEN` and
    `::TOKEN::`, so a `::error::` line from the data is shown, not obeyed."""
    terminal = (reports / "terminal.txt").read_text(encoding="utf-8")
    assert "\x1b[31m" not in terminal and "\x00" not in terminal
    lines = (reports / "stdout.txt").read_text(encoding="utf-8").splitlines()
    paused = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
    assert paused is not None, lines[:2]
    assert lines[-1] == f"::{paused.group(1)}::"
    assert terminal.count(f"::{paused.group(1)}::") == 1


@pytest.mark.parametrize("payload", PAYLOADS)
def test_plain_text_is_one_line_without_markup(payload: str) -> None:
    text = plain_text(payload)
    assert "\n" not in text and not re.search(r"(?<!\\)[<|]", text)
    assert "](" not in text and not re.search(r"(?<![\w\\])@\w", text)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_code_span_cannot_end_early(payload: str) -> None:
    span = code_span(payload)
    assert span.count("`") == 2 and "\n" not in span
    assert not re.search(r"(?<!\\)\|", span)
