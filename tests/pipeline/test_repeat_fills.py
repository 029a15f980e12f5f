"""A plain prompt fill is rendered once per test and reused by its later repeats: every run
still gets exactly the prompt a fresh render gives, and the statistics' numpy part is
loaded ahead only for suites whose analysis needs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.run.runner import render_prompt
from evals.suite import load_suite

SUITE = """\
prompts: ['Say {{word}} to {{name}}.', 'Only {{word}}']
providers: [echo]
evaluateOptions: {repeat: 3}
tests:
  - vars: {word: hello, name: Ada}
    assert: [{type: contains, value: hello}]
  - vars: {word: bye, name: Bo}
    options: {prefix: 'P: '}
    assert: [{type: contains, value: bye}]
  - vars: {word: '3', name: [1, 2]}
    assert: [{type: contains, value: '3'}]
"""


def test_every_repeat_gets_the_prompt_a_fresh_render_gives(write_suite):
    suite = load_suite(write_suite(SUITE))
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False))
    assert len(result.records) == 3 * 2 * 3
    by_key = {}
    for record in result.records:
        case = next(c for c in suite.cases if c.id == record.key.case_id)
        prompt = next(
            p
            for p in suite.prompts
            if (p.id if len(suite.prompts) > 1 else "") == record.key.prompt_id
        )
        by_key.setdefault((case.id, prompt.id), set()).add(record.prompt)
        assert record.response.output == record.prompt  # the echo agent got the same text
    assert all(len(prompts) == 1 for prompts in by_key.values())
    texts = {next(iter(p)) for p in by_key.values()}
    assert {"Say hello to Ada.", "P: Say bye to Bo.", "Only hello", "P: Only bye"} <= texts


def test_a_fill_is_what_render_prompt_gives(write_suite):
    suite = load_suite(write_suite(SUITE))
    from evals.plan.runs import build_plan
    from evals.run.local import build_agents, suite_runner
    from evals.tracing import NULL_TRACER

    plan = list(build_plan(suite, 3))
    runner = suite_runner(
        suite,
        build_agents(suite, plan),
        concurrency=1,
        timeout_s=None,
        tracer=NULL_TRACER,
        limiter=None,
    )
    for run in plan:
        template = f"{run.case.options.get('prefix') or ''}{run.prompt.raw}"
        expected = render_prompt(run, suite.root, runner.template_env)
        assert runner._filled(run, template) == expected


LOADS_NUMPY = """
import sys, threading
from pathlib import Path
from evals.suite import load_suite
from evals.pipeline.evaluation import _load_statistics_meanwhile
suite = load_suite(Path(sys.argv[1]))
_load_statistics_meanwhile(suite.gates.for_environment(None))
for thread in threading.enumerate():
    if thread.name == "evals-load-statistics":
        assert thread.daemon
        thread.join()
print("numpy" in sys.modules)
"""


def _loads_numpy(path) -> bool:
    out = subprocess.run(
        [sys.executable, "-c", LOADS_NUMPY, str(path)], capture_output=True, text=True, check=True
    )
    return out.stdout.strip() == "True"


ONE_TEST = """\
prompts: ['{{q}}']
providers: [echo]
tests:
  - vars: {q: a}
"""


@pytest.mark.slow
def test_numpy_is_loaded_ahead_only_when_the_analysis_will_need_it(write_suite):
    two_tests = ONE_TEST + "  - vars: {q: b}\n"
    assert not _loads_numpy(write_suite(two_tests, name="single.yaml"))
    compared = two_tests.replace(
        "providers: [echo]",
        "providers: [{id: echo, label: base}, {id: echo, label: cand}]\n"
        "gates: {baseline: base, candidate: cand}",
    )
    assert _loads_numpy(write_suite(compared, name="compared.yaml"))


ANALYSES_WITHOUT_NUMPY = """
import sys
from pathlib import Path
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
suite = load_suite(Path(sys.argv[1]))
result = run_evaluation(suite, RunOptions(progress=False, use_store=False, repeat=3))
(agent,) = result.summary.agents
low, high = agent.p95_latency_interval
assert low <= agent.p95_latency_ms <= high
print("numpy" in sys.modules)
"""


@pytest.mark.slow
def test_an_evaluation_of_one_agent_reports_its_p95_interval_without_numpy(write_suite):
    """Woodruff's interval is closed-form: a single agent's analysis never imports numpy."""
    suite = write_suite(ONE_TEST + "  - vars: {q: b}\n  - vars: {q: c}\n", name="three.yaml")
    out = subprocess.run(
        [sys.executable, "-c", ANALYSES_WITHOUT_NUMPY, str(suite)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"
