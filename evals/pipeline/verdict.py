"""An evaluation's verdict: its gates, or promptfoo's pass-rate rule for suites without any.

`evals run` (and every command that gates) and the pytest plugin read the verdict here, so
the same records give the same verdict whichever way they were run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

from evals.model.errors import ExitCode
from evals.model.evaluation import EvaluationResult
from evals.model.results import RunRecord


def has_gates(result: EvaluationResult) -> bool:
    """True when the suite configures gates (its `gates:` block); else promptfoo's rule."""
    return result.suite.raw.get("gates") is not None


def promptfoo_passed(records: Sequence[RunRecord]) -> bool:
    """promptfoo's rule: the percentage of passing runs reaches the threshold.

    The threshold comes from PROMPTFOO_PASS_RATE_THRESHOLD (default 100).
    """
    try:
        threshold = float(os.environ.get("PROMPTFOO_PASS_RATE_THRESHOLD", "100"))
    except ValueError:
        threshold = 100.0
    passed = sum(1 for r in records if r.passed)
    pass_rate = 100.0 * passed / len(records) if records else 100.0
    return pass_rate >= (threshold if math.isfinite(threshold) else 100.0)


def verdict_passed(result: EvaluationResult) -> bool:
    """Whether the evaluation passes: its gates decide, or promptfoo's rule without gates."""
    if has_gates(result):
        return result.gates.passed
    return promptfoo_passed(result.records)


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
