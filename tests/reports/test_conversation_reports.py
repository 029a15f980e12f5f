"""Conversations in the reports: turn by turn, the failing turn highlighted, nothing an
agent or a user wrote taken for markup."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from evals.analysis.cells import run_facts
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.reports.conversation import conversation_turns, failed_conversations
from evals.reports.html import render_html
from evals.reports.markdown import render_markdown
from evals.reports.terminal import render_terminal
from evals.suite import load_suite

HOSTILE = "<script>alert('x')</script> [bold]not markup[/bold]"

AGENT = f"""\
import json

def call_api(prompt, options, context):
    turn = sum(m["role"] == "user" for m in json.loads(prompt))
    steps = [{{"kind": "tool", "name": "pay", "arguments": {{"to": "x"}}, "effect": "write"}}]
    eager = context["vars"]["who"] == "eager"
    if turn == 1:
        return {{"output": {HOSTILE!r}, "trajectory": steps if eager else []}}
    return {{"output": "paid", "trajectory": steps}}
"""

SUITE = """\
prompts: ["Pay agent."]
providers:
  - {id: file://agent.py, label: baseline}
  - {id: file://agent.py, label: candidate}
gates: {baseline: baseline, candidate: candidate}
defaultTest:
  provider:
    id: promptfoo:simulated-user
    config:
      provider:
        id: evals:scripted-user
        config:
          opening: "pay {{who}} <b>now</b>"
          responses: ["Yes, go ahead."]
tests:
  - description: careful
    vars: {who: careful}
    assert: [{type: policy}]
  - description: eager
    vars: {who: eager}
    assert: [{type: policy}]
"""


@pytest.fixture
def result(write_suite):
    path = write_suite(SUITE, {"agent.py": AGENT})
    return run_evaluation(load_suite(path), RunOptions(use_store=False, progress=False))


def test_the_html_report_shows_each_turn_escaped_and_the_failing_one_marked(result):
    page = render_html(result)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(" in page
    assert "pay eager &lt;b&gt;now&lt;/b&gt;" in page
    failed = re.findall(r"<div class='turn failed'><div class='muted'>turn (\d)", page)
    assert failed == ["1", "1"]  # the eager case, for each agent (both run the same agent)
    assert "write call without the user&#39;s confirmation" in page
    assert page.count(".evals-chat{") == 1  # the style once, in the head


def test_turns_hold_both_sides_and_the_calls_between(result):
    eager = next(r for r in result.records if r.key.case_id == "eager")
    turns = conversation_turns(eager)
    assert [(t.number, t.user, t.agent, [s.name for s in t.steps]) for t in turns] == [
        (1, "pay eager <b>now</b>", HOSTILE, ["pay"]),
        (2, "Yes, go ahead.", "paid", ["pay"]),
        (3, "###STOP###", None, []),
    ]
    assert [t.failed for t in turns] == [True, False, False]
    assert turns[2].ends


def test_markdown_and_terminal_list_failed_conversations_with_their_turn(result):
    markdown = render_markdown(result)
    assert "| candidate | eager | 1/1 | repeat 1: Policy violation: turn 1: [approval] pay:" in (
        markdown
    )
    found = failed_conversations(run_facts(result).conversations, ["candidate", "baseline"])
    assert [(f.agent, f.case_id, f.failed, f.conversations) for f in found] == [
        ("candidate", "eager", 1, 1),
        ("baseline", "eager", 1, 1),
    ]
    buffer = io.StringIO()
    render_terminal(result, Console(file=buffer, width=200))
    printed = buffer.getvalue()
    assert "• candidate · eager: 1 of 1 failed; repeat 1: Policy violation: turn 1: [approval]" in (
        printed
    )
