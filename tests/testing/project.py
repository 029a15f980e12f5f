"""A small pytest project with an evaluated agent, written into a pytester directory."""

from __future__ import annotations

import textwrap

import pytest

# pytester's in-process runs drop the modules they import when they end, and numpy's C
# extensions cannot load twice in one process: the modules an evaluation uses are loaded
# here, before any run, so every run finds them loaded.
import evals.agents.python_provider
import evals.graders.output
import evals.graders.trajectory
import evals.pipeline.calibration
import evals.pipeline.evaluation
import evals.reports.data_files
import evals.reports.markdown
import evals.reports.terminal
import evals.store.store
import evals.testing.evaluation
import evals.testing.session  # noqa: F401

# Passes a run when the run's seed draws below `rate`, so every verdict follows from the
# seeds; reports a tool call, usage and a cost like a real agent.
AGENT = """
import random
import time

def agent(prompt, options, context):
    config = (options or {}).get("config") or {}
    if prompt == "explode":
        raise RuntimeError("the agent broke")
    if prompt == "garbage":
        return 42
    if prompt == "hang":
        time.sleep(3)
    draw = random.Random(context["seed"]).random()
    ok = draw < float(config.get("rate", 1.0))
    return {
        "output": f"echo {prompt}" if ok else "no idea",
        "tokenUsage": {"prompt": 10, "completion": 5},
        "cost": 0.002,
        "trajectory": [
            {"kind": "model", "name": "sim"},
            {"kind": "tool", "name": "lookup", "arguments": {"q": prompt}, "result": draw},
        ],
        "metadata": {"draw": draw},
    }
"""

TESTS = """
import pytest
from evals.testing import assert_trajectory, check

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]

@pytest.mark.evals(tags=["smoke"], priority="P1")
@pytest.mark.parametrize("word", WORDS)
def test_echoes(evals_agent, word):
    result = evals_agent(word)
    assert_trajectory(result, ["lookup"], mode="used")
    check(result, "contains", f"echo {word}")
"""


DEFAULT_GATES = "min_pass_rate: 0.3\n  max_error_rate: 0.5"


def suite(gates: str = DEFAULT_GATES, rates: tuple[float, ...] = (1.0,)) -> str:
    """A suite file: one provider per rate (labels a0, a1, ...), the gates, 3 repeats.

    The default error-rate limit is one that 18 error-free runs can show to hold, so a
    passing session reads PASS rather than undetermined."""
    providers = "".join(
        f"  - id: file://agent.py:agent\n    label: a{i}\n    config: {{rate: {rate}}}\n"
        for i, rate in enumerate(rates)
    )
    block = f"gates:\n  {gates}\n" if gates else ""
    return f"providers:\n{providers}{block}evaluateOptions:\n  repeat: 3\n"


def write_project(
    pytester: pytest.Pytester, tests: str = TESTS, suite_text: str | None = None
) -> None:
    """agent.py, suite.yaml (evals_suite in pytest.ini) and test_agent.py."""
    pytester.makepyfile(agent=textwrap.dedent(AGENT))
    pytester.makepyfile(test_agent=textwrap.dedent(tests))
    (pytester.path / "suite.yaml").write_text(suite_text or suite(), encoding="utf-8")
    pytester.makeini("[pytest]\nevals_suite = suite.yaml\n")
