"""What k repeats of a case say: pass@k, pass^k and how often repeats disagree.

References:
- Chen, M. et al. (2021). Evaluating large language models trained on code.
  arXiv:2107.03374 (unbiased pass@k = 1 - C(n-c, k)/C(n, k)).
- Yao, S. et al. (2024). tau-bench: a benchmark for tool-agent-user interaction in
  real-world domains. arXiv:2406.12045 (pass^k = C(c, k)/C(n, k)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def _check(n: int, c: int, k: int) -> None:
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"need n >= 1 and 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be within [1, n={n}], got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k runs drawn without replacement from n passes.

    Unbiased estimator of Chen et al. (2021) with c passing runs out of n; exact
    integer arithmetic.
    """
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all of k runs drawn without replacement from n pass (tau-bench)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def case_flake(passes: int, runs: int) -> float | None:
    """Probability that two different repeats of a case disagree: 2x(k-x)/(k(k-1)).

    0 for a case that always passes or always fails, 1 at most; None with fewer than two
    runs, where disagreement cannot be observed.
    """
    if runs < 2:
        return None
    if not 0 <= passes <= runs:
        raise ValueError(f"passes must be within [0, {runs}], got {passes}")
    return 2 * passes * (runs - passes) / (runs * (runs - 1))


def flake_rate(outcomes: Sequence[tuple[int, int]]) -> float | None:
    """Share of cases (with at least two runs) that both passed and failed.

    The definition a team reads in a gate ("no more than 3 % unstable cases"); cases run
    once are left out. `outcomes` holds (passes, runs) per case.
    """
    eligible = [(x, k) for x, k in outcomes if k >= 2]
    if not eligible:
        return None
    return sum(1 for x, k in eligible if 0 < x < k) / len(eligible)
