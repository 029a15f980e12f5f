"""An evaluation's verdict: its gates, or promptfoo's pass-rate rule for suites without any.

`evals run` (and every command that gates) and the pytest plugin read the verdict here, so
the same records give the same verdict whichever way they were run.
"""

from __future__ import annotations

import math
import os

from evals.analysis.cells import run_facts
from evals.model.errors import ExitCode
from evals.model.evaluation import EvaluationResult, RunFacts


def has_gates(result: EvaluationResult) -> bool:
    """True when the suite configures gates (its `gates:` block); else promptfoo's rule."""
    return result.suite.raw.get("gates") is not None


def _threshold() -> float:
    """PROMPTFOO_PASS_RATE_THRESHOLD in percent (default, and when unreadable, 100)."""
    try:
        threshold = float(os.environ.get("PROMPTFOO_PASS_RATE_THRESHOLD", "100"))
    except ValueError:
        return 100.0
    return threshold if math.isfinite(threshold) else 100.0


def _pass_rate(facts: RunFacts) -> float:
    return 100.0 * facts.passed / facts.runs if facts.runs else 100.0


def promptfoo_passed(facts: RunFacts) -> bool:
    """promptfoo's rule: the percentage of passing runs reaches the threshold.

    The threshold comes from PROMPTFOO_PASS_RATE_THRESHOLD (default 100).
    """
    return _pass_rate(facts) >= _threshold()


def rule_sentence(result: EvaluationResult) -> str | None:
    """For a suite without a `gates:` block, the sentence that says how promptfoo's rule
    decided the exit code (None when gates decide): the exit code 100 a user meets in CI
    is explained where it happens."""
    if has_gates(result):
        return None
    facts = run_facts(result)
    threshold = f"PROMPTFOO_PASS_RATE_THRESHOLD {_threshold():g} %"
    counted = f"{facts.passed} of {facts.runs} runs passed ({_pass_rate(facts):.1f} %)"
    advice = "a gates: block decides with intervals instead (docs/gates.md)"
    if promptfoo_passed(facts):
        return (
            f"✅ No gates: block, so promptfoo's rule decides: {counted}, at least "
            f"{threshold}: exit code 0; {advice}"
        )
    return (
        f"❌ No gates: block, so promptfoo's rule decides: {counted}, below {threshold}: "
        f"exit code {exit_code(result)} (PROMPTFOO_FAILED_TEST_EXIT_CODE, as promptfoo); {advice}"
    )


def verdict_passed(result: EvaluationResult) -> bool:
    """Whether the evaluation passes: its gates decide, or promptfoo's rule without gates."""
    if has_gates(result):
        return result.gates.passed
    return promptfoo_passed(run_facts(result))


def exit_code(result: EvaluationResult) -> int:
    """`evals run`'s exit code: 0 when it passes, 1 for a failed gate, and without gates
    promptfoo's failing code (PROMPTFOO_FAILED_TEST_EXIT_CODE, default 100)."""
    if verdict_passed(result):
        return int(ExitCode.OK)
    if has_gates(result):
        return int(ExitCode.GATE_FAILED)
    try:
        return int(os.environ.get("PROMPTFOO_FAILED_TEST_EXIT_CODE", "100"))
    except ValueError:
        return 100
