"""Small builders for corpus cases: a standard suite, agents, checks over the outcome."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import Any

from tests.hostile.harness import REPORTS, Case, Correct, ErrorRow, Outcome

GOOD_AGENT = """\
def call_api(prompt, options, context):
    return {"output": "ok " + prompt}
"""

# One passing agent and the agent under test; gates decide between them.
TWO_AGENTS = """\
prompts: ['{{q}}']
providers:
  - {id: file://good.py, label: good}
  - %(agent)s
evaluateOptions: {repeat: %(repeat)d%(options)s}
tests:
  - vars: {q: hello}
    assert: [{type: contains, value: ok}]
gates: {baseline: good, candidate: agent}
"""

ONE_AGENT = """\
prompts: ['{{q}}']
providers: [{id: file://agent.py, label: agent}]
tests:
  - vars: {q: hello}
    assert: [{type: contains, value: ok}]
gates: {}
"""


def dedent(text: str) -> str:
    """Case files are written indented in the source; this is the file's text."""
    return textwrap.dedent(text).lstrip("\n")


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of `text` holding `needle`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise ValueError(f"{needle!r} not in the text")


def two_agent_suite(
    agent: str = "{id: file://agent.py, label: agent}", repeat: int = 1, options: str = ""
) -> str:
    """The standard suite: `good` (baseline) against the provider entry `agent`."""
    return TWO_AGENTS % {
        "agent": agent,
        "repeat": repeat,
        "options": f", {options}" if options else "",
    }


def agent_case(
    id: str,
    code: str,
    expect: Any,
    *,
    worker: bool = False,
    timeout_ms: int | None = None,
    repeat: int = 1,
    mode: str = "inprocess",
    limit_s: float = 20.0,
    extra_files: dict[str, str | bytes] | None = None,
    category: str = "agents",
    reports: tuple[str, ...] = REPORTS,
) -> Case:
    """A case running the Python agent `code` (as `agent`) next to a good baseline."""
    config = ", config: {worker: true}" if worker else ""
    options = f"timeoutMs: {timeout_ms}" if timeout_ms is not None else ""
    suite = two_agent_suite(f"{{id: file://agent.py, label: agent{config}}}", repeat, options)
    files: dict[str, str | bytes] = {
        "suite.yaml": suite,
        "good.py": GOOD_AGENT,
        "agent.py": dedent(code),
    }
    files.update(extra_files or {})
    return Case(
        id=id,
        category=category,
        files=files,
        expect=expect,
        mode=mode,
        limit_s=limit_s,
        reports=reports,
    )


def error_row(kind: str, message: str | None = None, runs: int = 1) -> ErrorRow:
    """The agent under test's runs are all error rows of `kind`."""
    return ErrorRow(kind=kind, agent="agent", runs=runs, message=message)


def runs_of(outcome: Outcome, agent: str | None = None) -> list[dict[str, Any]]:
    """Stored runs, of one agent when named."""
    return [r for r in outcome.runs() if agent is None or r["agent"] == agent]


def all_pass(count: int, agent: str | None = None) -> Callable[[Outcome], None]:
    """A check: exactly `count` runs stored, every one passing."""

    def check(outcome: Outcome) -> None:
        runs = runs_of(outcome, agent)
        assert len(runs) == count, f"{len(runs)} runs stored, expected {count}"
        bad = [(r["agent"], r["status"], r["error"]) for r in runs if r["status"] != "pass"]
        assert not bad, f"runs did not pass: {bad[:3]}"

    return check


def output_is(expected: Any, agent: str | None = None) -> Callable[[Outcome], None]:
    """A check: every stored run of the agent passed with exactly this output."""

    def check(outcome: Outcome) -> None:
        runs = runs_of(outcome, agent)
        assert runs, "no run stored"
        outputs = [json.loads(r["output"]) if r["output"] is not None else None for r in runs]
        assert all(o == expected for o in outputs), f"outputs {outputs[:2]!r}"
        assert all(r["status"] != "error" for r in runs), [r["error"] for r in runs][:2]

    return check


def prompt_is(expected: str) -> Callable[[Outcome], None]:
    """A check: every stored run was sent exactly this prompt."""

    def check(outcome: Outcome) -> None:
        prompts = [r["prompt"] for r in outcome.runs()]
        assert prompts, "no run stored"
        assert all(p == expected for p in prompts), f"prompts {prompts[:2]!r}"

    return check


def both(*checks: Callable[[Outcome], None]) -> Callable[[Outcome], None]:
    """A check made of several."""

    def check(outcome: Outcome) -> None:
        for each in checks:
            each(outcome)

    return check


def stderr_has(*needles: str) -> Callable[[Outcome], None]:
    """A check: stderr holds each text (case-insensitive)."""

    def check(outcome: Outcome) -> None:
        for needle in needles:
            assert needle.lower() in outcome.stderr.lower(), f"stderr lacks {needle!r}"

    return check


def correct_runs(what: str, count: int, **kwargs: Any) -> Correct:
    """The evaluation completes with `count` passing runs."""
    return Correct(what, check=all_pass(count), **kwargs)
