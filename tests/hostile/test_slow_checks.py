"""Checks that lie or stall: regular expressions and JavaScript checks with limits, off the loop.

A regex keeps JavaScript's meaning and answers what JavaScript answers, even over a long
output whose match needs a long backtracking stack. A check that runs past a limit makes
its run an error row of a documented kind, never a plain fail: `timeout` when it outlasts
the run's timeout, `grader_error` naming the sandbox's limit otherwise. And a catastrophic
pattern in one case runs off the event loop: it cannot hold up the other runs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evals.common import jsengine
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

SLOW_AGENT = """\
import asyncio


async def call_api(prompt, options, context):
    await asyncio.sleep(0.05)
    return {"output": prompt}
"""


def _run(path: Path, timeout_s: float | None = None):
    options = RunOptions(use_store=False, progress=False, timeout_s=timeout_s)
    return run_evaluation(load_suite(path), options)


def test_a_long_correct_answer_passes_a_backtracking_regex(
    write_suite: Callable[..., Path],
) -> None:
    answer = "ab" * 1_000_000  # 2 MB: the match's stack outgrows the templates' 64 MiB
    path = write_suite(
        f"""\
        prompts: ['{{{{ a }}}}']
        providers: [echo]
        tests:
          - vars: {{a: {answer}}}
            assert: [{{type: regex, value: '^(ab)+$'}}, {{type: not-regex, value: '^(ab)+c$'}}]
        """
    )
    (record,) = _run(path).records
    assert record.status == "pass", record.error or record.grade


def test_a_regex_past_its_memory_limit_is_an_error_row_not_a_fail(tmp_path: Path) -> None:
    """Run in a process of its own, with the regex realm's memory limit lowered."""
    check = "[{type: regex, value: '^(ab)+$'}]"
    (tmp_path / "suite.yaml").write_text(
        "prompts: ['{{ a }}']\nproviders: [echo]\n"
        f"tests: [{{vars: {{a: {'ab' * 400_000}}}, assert: {check}}}]\n",
        encoding="utf-8",
    )
    script = textwrap.dedent(
        """\
        import sys
        from evals.common import jsengine
        from evals.model.options import RunOptions
        from evals.pipeline.evaluation import run_evaluation
        from evals.suite import load_suite

        jsengine._limits.regex_memory_bytes = 8 * 1024 * 1024
        result = run_evaluation(load_suite(sys.argv[1]), RunOptions(use_store=False))
        (record,) = result.records
        print(record.status, record.error_kind)
        print(record.error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "suite.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    status, _, error = done.stdout.partition("\n")
    assert status == "error grader_error", done.stdout + done.stderr
    assert "regex check was stopped" in error and "8 MB" in error


def test_a_check_past_the_sandbox_limit_is_a_grader_error(
    write_suite: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsengine, "DEFAULT_TIME_LIMIT_S", 0.3)
    path = write_suite(
        """\
        prompts: ['{{ q }}']
        providers: [echo]
        tests:
          - vars: {q: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab}
            assert: [{type: regex, value: '^(a|aa)+$'}]
          - vars: {q: ok}
            assert: [{type: javascript, value: "output === 'ok'"}]
        """
    )
    stalled, fine = sorted(_run(path).records, key=lambda r: r.case_index)
    assert (stalled.status, stalled.error_kind) == ("error", "grader_error")
    assert "regex check was stopped: JavaScript ran longer than 0.3 s" in (stalled.error or "")
    assert fine.passed


def test_a_check_past_the_runs_timeout_is_a_timeout(write_suite: Callable[..., Path]) -> None:
    path = write_suite(
        """\
        prompts: ['{{ q }}']
        providers: [echo]
        tests:
          - vars: {q: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab}
            assert: [{type: regex, value: '^(a|aa)+$'}]
        """
    )
    (record,) = _run(path, timeout_s=0.5).records
    assert (record.status, record.error_kind) == ("error", "timeout")


def test_a_catastrophic_regex_does_not_hold_up_other_runs(
    write_suite: Callable[..., Path],
) -> None:
    """While one run's check backtracks for seconds, the other runs (each awaiting its
    agent) are served: their latencies stay those of their agent."""
    tests = "".join(
        f"  - vars: {{q: fine {i}}}\n    assert: [{{type: contains, value: fine}}]\n"
        for i in range(24)
    )
    path = write_suite(
        "prompts: ['{{ q }}']\nproviders: [file://agent.py]\n"
        "evaluateOptions: {maxConcurrency: 4}\ntests:\n"
        "  - vars: {q: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab}\n"
        "    assert: [{type: regex, value: '^(a|aa)+$'}]\n" + tests,
        files={"agent.py": SLOW_AGENT},
    )
    started = time.monotonic()
    records = _run(path, timeout_s=3.0).records
    elapsed = time.monotonic() - started
    stalled = next(r for r in records if r.case_index == 0)
    others = [r for r in records if r.case_index != 0]
    assert stalled.error_kind == "timeout"
    assert all(r.passed for r in others)
    assert max(r.latency_ms for r in others) < 1500, sorted(r.latency_ms for r in others)
    assert elapsed < 30


def test_an_assert_set_awaits_its_checks_off_the_loop(write_suite: Callable[..., Path]) -> None:
    path = write_suite(
        """\
        prompts: ['{{ q }}']
        providers: [echo]
        tests:
          - vars: {q: "order 12 shipped"}
            assert:
              - type: assert-set
                assert:
                  - {type: regex, value: '(?<=order )\\d+'}
                  - {type: javascript, value: "output.includes('shipped')"}
                  - {type: contains, value: order}
        """
    )
    (record,) = _run(path).records
    assert record.passed, record.grade
