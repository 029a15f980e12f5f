"""A provider `delay` waits after each call; `evaluateOptions.delay` runs one call at a time."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

AGENT = """
import json
import time
from pathlib import Path


def timed(prompt, options, context):
    start = time.monotonic()
    time.sleep(0.02)
    with Path(__file__).with_name("calls.jsonl").open("a") as log:
        log.write(json.dumps([start, time.monotonic()]) + "\\n")
    return {"output": prompt}
"""

TESTS = "tests:\n" + "".join(f"  - vars: {{q: q{i}}}\n" for i in range(4))


def _calls(write_suite, config: str, concurrency: int | None) -> list[list[float]]:
    path = write_suite(config + TESTS, files={"agent.py": AGENT})
    suite = load_suite(path)
    options = RunOptions(use_store=False, progress=False, concurrency=concurrency)
    result = run_evaluation(suite, options)
    assert [r.error for r in result.records] == [None] * 4
    lines = (path.parent / "calls.jsonl").read_text().splitlines()
    return sorted(json.loads(line) for line in lines)


@pytest.mark.parametrize("concurrency", [None, 4])
def test_evaluate_options_delay_runs_calls_one_at_a_time_and_apart(write_suite, concurrency):
    config = "prompts: ['{{q}}']\nproviders: [file://agent.py:timed]\n"
    calls = _calls(write_suite, config + "evaluateOptions: {delay: 150}\n", concurrency)
    gaps = [later[0] - earlier[1] for earlier, later in pairwise(calls)]
    assert min(gaps) >= 0.14


def test_provider_delay_waits_after_each_call(write_suite):
    config = "prompts: ['{{q}}']\nproviders:\n  - {id: file://agent.py:timed, delay: 150}\n"
    config += "evaluateOptions: {maxConcurrency: 1}\n"
    calls = _calls(write_suite, config, None)
    gaps = [later[0] - earlier[1] for earlier, later in pairwise(calls)]
    assert min(gaps) >= 0.14
