"""An agent that raises, hangs or returns garbage becomes an error row; the rest complete."""

from __future__ import annotations

import time

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

AGENTS = """
import time


def good(prompt, options, context):
    return {"output": "ok " + prompt}


def raises(prompt, options, context):
    raise RuntimeError("tool server down")


def hangs(prompt, options, context):
    time.sleep(5)
    return {"output": "too late"}


def garbage(prompt, options, context):
    return ["not", "a", "dict"]


async def async_good(prompt, options, context):
    return {"output": "ok " + prompt, "cost": 0.001, "tokenUsage": {"prompt": 3, "completion": 2}}


def reports_error(prompt, options, context):
    return {"error": "rate limited"}
"""

SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: file://agents.py:good, label: good}
  - {id: file://agents.py:raises, label: raises}
  - {id: file://agents.py:hangs, label: hangs}
  - {id: file://agents.py:garbage, label: garbage}
  - {id: file://agents.py:async_good, label: async_good}
  - {id: file://agents.py:reports_error, label: reports_error}
evaluateOptions: {repeat: 2, maxConcurrency: 8, timeoutMs: 300}
tests:
  - vars: {q: one}
    assert: [{type: contains, value: ok}]
  - vars: {q: two}
    assert: [{type: contains, value: two}]
"""


def test_faulty_agents_become_error_rows(write_suite):
    suite = load_suite(write_suite(SUITE, files={"agents.py": AGENTS}))
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False))
    by_agent: dict[str, list] = {}
    for record in result.records:
        by_agent.setdefault(record.key.agent, []).append(record)
    assert {a: len(rs) for a, rs in by_agent.items()} == dict.fromkeys(by_agent, 4)
    assert len(by_agent) == 6
    assert all(r.status == "pass" for r in by_agent["good"])
    assert all(r.status == "pass" for r in by_agent["async_good"])
    assert all(r.cost == 0.001 and r.total_tokens == 5 for r in by_agent["async_good"])
    kinds = {
        agent: {(r.status, r.error_kind) for r in rs}
        for agent, rs in by_agent.items()
        if agent not in ("good", "async_good")
    }
    assert kinds == {
        "raises": {("error", "agent_error")},
        "hangs": {("error", "timeout")},
        "garbage": {("error", "malformed")},
        "reports_error": {("error", "agent_error")},
    }
    assert all("tool server down" in r.error for r in by_agent["raises"])
    assert all("timed out after 0.3 s" in r.error for r in by_agent["hangs"])
    assert all("list" in r.error for r in by_agent["garbage"])


def test_repeats_get_distinct_reproducible_seeds(write_suite):
    suite = load_suite(write_suite(SUITE, files={"agents.py": AGENTS}))
    options = RunOptions(use_store=False, progress=False, agents=["good"])
    first = run_evaluation(suite, options)
    second = run_evaluation(suite, RunOptions(use_store=False, progress=False, agents=["good"]))
    seeds_first = sorted((r.key.as_tuple(), r.seed) for r in first.records)
    seeds_second = sorted((r.key.as_tuple(), r.seed) for r in second.records)
    assert seeds_first == seeds_second
    assert len({seed for _, seed in seeds_first}) == len(seeds_first)


def test_a_run_seed_draws_fresh_reproducible_seeds(write_suite):
    suite = load_suite(write_suite(SUITE, files={"agents.py": AGENTS}))

    def seeds(seed: int) -> dict:
        options = RunOptions(use_store=False, progress=False, agents=["good"], seed=seed)
        result = run_evaluation(suite, options)
        assert result.meta.config["seed"] == seed
        return {r.key.as_tuple(): r.seed for r in result.records}

    default, salted, again = seeds(0), seeds(11), seeds(11)
    assert salted == again
    assert default.keys() == salted.keys()
    assert all(default[key] != salted[key] for key in default)


BLOCKING = """\
import asyncio
import time


async def busy(prompt, options, context):
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pass
    return {"output": "ok late"}


async def sleeps(prompt, options, context):
    time.sleep(30)
    return {"output": "ok late"}


async def deaf(prompt, options, context):
    while True:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            pass


def long_error(prompt, options, context):
    raise RuntimeError("start " + "m" * (1 << 20) + " end")
"""

BLOCKING_SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: file://agents.py:busy, label: busy}
  - {id: file://agents.py:sleeps, label: sleeps}
  - {id: file://agents.py:deaf, label: deaf}
  - {id: file://agents.py:long_error, label: long_error}
evaluateOptions: {maxConcurrency: 1, timeoutMs: 300}
tests:
  - vars: {q: one}
"""


@pytest.mark.slow
def test_agents_that_block_the_loop_or_ignore_cancellation_time_out(write_suite):
    suite = load_suite(write_suite(BLOCKING_SUITE, files={"agents.py": BLOCKING}))
    started = time.monotonic()
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False))
    elapsed = time.monotonic() - started
    kinds = {r.key.agent: r.error_kind for r in result.records}
    assert kinds == {
        "busy": "timeout",
        "sleeps": "timeout",
        "deaf": "timeout",
        "long_error": "agent_error",
    }
    assert elapsed < 20, f"the blocked runs held the evaluation {elapsed:.1f} s"
    (error,) = [r.error for r in result.records if r.key.agent == "long_error"]
    assert len(error) < 17_000
    assert error.startswith("agent raised RuntimeError: start") and error.endswith(" end")
    assert "characters cut" in error
