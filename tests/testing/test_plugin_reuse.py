"""`pytest --evals` answers an unchanged baseline's tests from its stored runs, behind the
drift guard: the guard's share runs fresh first, the rest is skipped and answered from the
store; a world that moved since runs the baseline fresh; `--evals-fresh-baseline` never
reuses."""

from __future__ import annotations

import textwrap

import pytest

from evals.gates.baseline import guard_repeats
from tests.testing.project import write_project

pytestmark = pytest.mark.slow

pytest_plugins = ["pytester"]

# Answers from the run's seed, unless the world file says the API behind it moved.
AGENT = """
import random
from pathlib import Path

HERE = Path(__file__).parent


def agent(prompt, options, context):
    if (HERE / "world.txt").read_text().strip() == "moved":
        return {"output": "no idea"}
    draw = random.Random(context["seed"]).random()
    return {"output": f"echo {prompt}" if draw < 0.8 else "no idea"}
"""

TESTS = """
import pytest
from evals.testing import check

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]

@pytest.mark.evals
@pytest.mark.parametrize("word", WORDS)
def test_echoes(evals_agent, word):
    check(evals_agent(word), "contains", f"echo {word}")
"""

SUITE = """\
providers:
  - {id: file://agent.py:agent, label: main}
  - {id: file://agent.py:agent, label: branch}
gates: {baseline: main, candidate: branch, min_pass_rate: 0.3, max_error_rate: 0.5}
evaluateOptions: {repeat: 3}
"""

# 6 cases x 3 repeats per agent; the guard re-runs a fifth of the baseline's 18 stored
# runs, at least one per case: 6, so 12 are answered from the store.
RUNS, GUARD = 36, 6


def _project(pytester: pytest.Pytester) -> None:
    write_project(pytester, tests=TESTS, suite_text=SUITE)
    pytester.makepyfile(agent=textwrap.dedent(AGENT))
    (pytester.path / "world.txt").write_text("steady\n", encoding="utf-8")


def _store(pytester: pytest.Pytester) -> str:
    return f"sqlite:///{pytester.path / 'results.db'}"


def _evals(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--evals",
        "--evals-store",
        _store(pytester),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:langsmith_plugin",
        *args,
    )


def test_a_second_session_answers_the_unchanged_baseline_from_the_store(pytester):
    _project(pytester)
    first = _evals(pytester)
    assert "skipped" not in first.stdout.str().splitlines()[-1]
    assert "stored run(s) reused" not in first.stdout.str()

    second = _evals(pytester)

    outcomes = second.parseoutcomes()
    assert outcomes.get("skipped") == RUNS // 2 - GUARD
    out = " ".join(second.stdout.str().split())
    assert f"baseline main: {RUNS // 2 - GUARD} stored run(s) reused, {GUARD} re-run fresh" in out
    assert "as a drift check: no drift" in out
    calls = RUNS - (RUNS // 2 - GUARD)
    assert f"agent calls: {calls} against {RUNS} with every agent run fresh" in out
    assert second.ret == first.ret

    # --evals-fresh-baseline runs every test
    fresh = _evals(pytester, "--evals-fresh-baseline")
    assert "skipped" not in fresh.parseoutcomes()
    assert "stored run(s) reused" not in fresh.stdout.str()


def test_a_moved_world_runs_the_baseline_fresh_under_xdist_and_serially(pytester):
    _project(pytester)
    _evals(pytester)
    (pytester.path / "world.txt").write_text("moved\n", encoding="utf-8")

    # a worker sees only its own runs: the answered runs are dropped at the end, said so
    parallel = _evals(pytester, "-n", "2")
    out = " ".join(parallel.stdout.str().split())
    assert f"drift found after {RUNS // 2 - GUARD} baseline run(s) were answered" in out
    assert "they are dropped and the baseline keeps its fresh runs" in out
    assert "baseline main: drift found" in out and "baseline re-run fresh" in out

    # serially the guard's runs come first, so the other baseline tests then run fresh
    serial = _evals(pytester)
    assert "skipped" not in serial.parseoutcomes()
    out = " ".join(serial.stdout.str().split())
    assert f"baseline main: drift found ({GUARD} stored run(s) re-run fresh pass 0.0 %" in out
    assert "baseline re-run fresh" in out
    assert f"agent calls: {RUNS} against {RUNS}" in out


P0_AGENTS = """
def main_agent(prompt, options, context):
    return {"output": f"echo {prompt}"}


def branch_agent(prompt, options, context):
    return {"output": "no idea" if prompt == "refund" else f"echo {prompt}"}
"""

P0_TESTS = """
import pytest
from evals.testing import check

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]

@pytest.mark.evals
@pytest.mark.parametrize("word", WORDS)
def test_echoes(evals_agent, word):
    check(evals_agent(word), "contains", f"echo {word}")

@pytest.mark.evals(repeat=5, priority="P0")
def test_refund(evals_agent):
    check(evals_agent("refund"), "contains", "echo refund")
"""

# At confidence 0.996 split among three gates, the P0 gate's whole share (0.00133) fails
# 5/5 -> 0/5 (p = 2^-10 = 0.00098); half of it, kept in reserve, could not.
P0_SUITE = """\
providers:
  - {id: file://agent.py:main_agent, label: main}
  - {id: file://agent.py:branch_agent, label: branch}
gates: {baseline: main, candidate: branch, confidence: 0.996}
evaluateOptions: {repeat: 3}
"""


def test_a_broken_p0_test_fails_again_when_the_stored_baseline_answers(pytester):
    write_project(pytester, tests=P0_TESTS, suite_text=P0_SUITE)
    pytester.makepyfile(agent=textwrap.dedent(P0_AGENTS))
    first = _evals(pytester)
    assert "p0_regressions" in first.stdout.str() and first.ret != 0

    second = _evals(pytester)
    out = " ".join(second.stdout.str().split())
    # the P0 test's 5 baseline runs run fresh, the guard's share of the others too
    others = {f"test_echoes[{w}]": (3, 3) for w in ["a", "b", "c", "d", "e", "f"]}
    guarded = 5 + sum(len(r) for r in guard_repeats(others).values())
    answered = 6 * 3 + 5 - guarded
    assert second.parseoutcomes().get("skipped") == answered
    assert f"{answered} stored run(s) reused, {guarded} re-run fresh as a drift check" in out
    assert "(P0 cases in full): no drift" in out
    assert "p0_regressions fail" in out and second.ret == first.ret
