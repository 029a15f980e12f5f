"""Whether a one-sided gate can still be decided by the last look of a sequential design.

A gate fails when its fail limit lies beyond its threshold and passes when its pass limit
lies within it. At a look after k of K repeats, both limits are the estimate plus or
minus a critical value times a standard error. By the last look the standard error can
shrink at most by sqrt(k/K) (exactly that when all the variance is run noise; variance
between cases shrinks less), the critical values move to the last look's levels, and the
estimate moves with a conditional standard deviation at most SE·sqrt(1 - k/K) (the
canonical joint distribution of nested means: Jennison and Turnbull 2000, §3.1). A gate
is *futile* when, even with that most favourable shrinkage, reaching either decision needs
the estimate to move more than `reach` conditional standard deviations: the conditional
power of both sides under the current estimate is then below Φ(-reach). The two sides
may have their own reach: a smaller one on the pass side gives up passes that would have
needed a favourable run of data, and still stops a gate only when failing is beyond the
fail side's reach. A rate at the end of its range (no errored run yet) has its fail limit
at the estimate; its spread is then read off the pass limit alone.

Stopping runs for futility is non-binding in the sense of group-sequential designs: it
never adds a chance to fail, so the false-failure rate can only fall; what it costs is
power, which the validation measures.
"""

from __future__ import annotations

import math

from evals.stats.distributions import normal_quantile


def _check(name: str, value: float) -> None:
    if not 0 < value < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")


def futile(
    measured: float,
    threshold: float,
    fail_limit: float,
    fail_level: float,
    pass_limit: float,
    pass_level: float,
    fraction: float,
    final_fail_level: float,
    final_pass_level: float,
    reach: float = 2.0,
    pass_reach: float | None = None,
    fail_only: bool = False,
) -> bool:
    """True when the fail decision is not within `reach` conditional standard deviations
    of the estimate by the last look, nor the pass decision within `pass_reach` (default
    `reach`); with `fail_only` the pass side is not judged at all (where an undetermined
    verdict passes, a pass changes nothing, only a failure could).

    `fail_limit` and `pass_limit` are the gate's one-sided limits at `fail_level` and
    `pass_level` now; higher is better when the fail limit (an upper limit) lies above the
    pass limit. `fraction` is k/K, the share of the last look's repeats run so far;
    `final_fail_level` and `final_pass_level` the levels the last look will use.
    """
    for name, value in (
        ("fail_level", fail_level),
        ("pass_level", pass_level),
        ("final_fail_level", final_fail_level),
        ("final_pass_level", final_pass_level),
        ("fraction", fraction),
    ):
        _check(name, value)
    if min(fail_level, pass_level, final_fail_level, final_pass_level) <= 0.5:
        raise ValueError("one-sided levels of limits lie above 1/2")
    pass_reach = reach if pass_reach is None else pass_reach
    if min(reach, pass_reach) < 0:
        raise ValueError(f"reach must be at least 0, got {min(reach, pass_reach)}")
    sign = 1.0 if fail_limit >= pass_limit else -1.0
    fail_width = sign * (fail_limit - measured)
    pass_width = sign * (measured - pass_limit)
    # A fail limit at the estimate (no errored run of an error rate's: a rate at the end
    # of its range) says nothing of the spread; the pass limit does.
    if fail_width < 0 or pass_width <= 0:
        return False
    error = max(fail_width / normal_quantile(fail_level), pass_width / normal_quantile(pass_level))
    shrink = math.sqrt(fraction)
    final_fail = fail_width * normal_quantile(final_fail_level) / normal_quantile(fail_level)
    final_pass = pass_width * normal_quantile(final_pass_level) / normal_quantile(pass_level)
    # How far the estimate must move (in the gate's better direction, signed) to decide.
    to_fail = sign * (measured - threshold) + final_fail * shrink
    to_pass = sign * (threshold - measured) + final_pass * shrink
    spread = error * math.sqrt(1 - fraction)
    return to_fail > reach * spread and (fail_only or to_pass > pass_reach * spread)
