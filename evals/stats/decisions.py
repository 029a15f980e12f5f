"""Three-way gate decisions from one-sided limits: pass, fail or undetermined.

A gate passes only when the data show the loss is within its tolerance, fails only when
they show it beyond, and is undetermined otherwise (the confidence-interval approach to
non-inferiority, evals.stats.noninferiority). Plain comparisons, no numpy: every
evaluation with gates decides them.
"""

from __future__ import annotations

from typing import Literal

Status = Literal["pass", "fail", "undetermined"]


def gate_status(
    lower: float,
    upper: float,
    threshold: float,
    higher_is_better: bool = True,
    fail_threshold: float | None = None,
) -> Status:
    """pass, fail or undetermined from one-sided limits and the gate's threshold.

    Higher is better (a pass rate, a difference against the baseline): pass when `lower`
    is at or above `threshold`, fail when `upper` is below `fail_threshold` (default the
    threshold); lower is better (an error or flake rate): pass when `upper` is at or below
    it, fail when `lower` is above. `lower` and `upper` may come at different levels (the
    pass limit at the level that protects against a false pass, the fail limit at the
    gate's share of the build's false-failure budget). A fail threshold stricter than the
    pass threshold (a P0 case: any shown loss fails, passing needs the loss shown within
    the tolerance) can make both hold; the failure wins.
    """
    fail_at = threshold if fail_threshold is None else fail_threshold
    if higher_is_better:
        fails, passes = upper < fail_at, lower >= threshold
    else:
        fails, passes = lower > fail_at, upper <= threshold
    if fails:
        return "fail"
    return "pass" if passes else "undetermined"
