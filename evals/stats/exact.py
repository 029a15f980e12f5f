"""Exact unconditional score tests for a difference of pass rates, and their inverted intervals.

A case's verdict and the interval printed next to it must agree: the interval is the set
of differences the test does not reject, so it excludes a value exactly when the test
rejects that value. Both come from one family of tests of H0: p1 - p2 = delta.

Independent samples (x1 of n1 against x2 of n2): the statistic is the score statistic of
Miettinen and Nurminen (1985) and Farrington and Manning (1990), whose variance uses the
maximum-likelihood rates restricted to p1 - p2 = delta; at delta = 0 it is the pooled
z statistic of Barnard's test. The p-value is the exact unconditional one: the tail
probability of the statistic maximized over the nuisance rate (Chan, I. S. F. and Zhang, Z.
(1999), Test-based exact confidence intervals for the difference of two binomial
proportions, Biometrics 55, 1202-1209; Agresti, A. and Min, Y. (2001), Biometrics 57,
963-971). A one-sided limit at level 1 - a is the delta where the one-sided p-value
reaches a (the "tail" method); a two-sided interval puts a/2 on each side.

Paired samples (both agents ran the same seeds): the statistic is Tango's score statistic
for the difference of two correlated proportions (Tango, T. (1998), Equivalence test and
confidence interval for the difference in proportions for the paired-sample design,
Statistics in Medicine 17, 891-908), with the same exact unconditional p-value over the
trinomial of discordant pairs.

The nuisance maximum is found on a grid refined twice around its peak.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

import numpy as np

Interval = tuple[float, float]
Alternative = Literal["less", "greater", "two-sided"]
Side = Literal["lower", "upper"]

_TIE = 1e-9
_GRID = (61, 21, 21)
_SEARCH_POINTS = 9
_PEAKS = 3
_SEARCH_ROUNDS = 6
_CELLS = 2_000_000

Numbers = float | np.ndarray
"""A number or an array of numbers: the statistics below broadcast over their inputs."""


def _restricted_rates(
    x1: Numbers, n1: int, x2: Numbers, n2: int, delta: Numbers
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood (p1, p2) subject to p1 - p2 = delta; broadcasts over all inputs.

    p2 solves Miettinen and Nurminen's cubic, written as t^3 - 3u^2·t + 2v = 0 after
    removing its square term. With three real roots their trigonometric root is the one
    inside the feasible interval; with one real root (where their formula takes the
    arccosine of a number beyond ±1) it is Cardano's; three Newton steps remove the
    rounding of either. The log-likelihood is concave, so when its slope at an end of
    the feasible interval points outwards the maximum is that end. At delta = 0 it is
    the pooled rate.
    """
    x1 = np.asarray(x1, dtype=float)
    x2 = np.asarray(x2, dtype=float)
    delta = np.asarray(delta, dtype=float)
    total = n1 + n2
    b = (n1 + 2 * n2) * delta - total - x1 - x2
    c = (n2 * delta - total - 2 * x2) * delta + x1 + x2
    d = x2 * delta * (1 - delta)
    shift = b / (3 * total)
    v = shift**3 - b * c / (6 * total**2) + d / (2 * total)
    u_squared = shift**2 - c / (3 * total)
    u = np.where(v >= 0, 1.0, -1.0) * np.sqrt(np.maximum(u_squared, 0.0))
    three_roots = (u_squared > 0) & (v * v <= u_squared**3)
    cosine = np.clip(v / np.where(three_roots, u, 1.0) ** 3, -1.0, 1.0)
    trigonometric = 2 * u * np.cos((np.pi + np.arccos(cosine)) / 3)
    root = np.sqrt(np.maximum(v * v - u_squared**3, 0.0))
    cardano = np.cbrt(-v + root) + np.cbrt(-v - root)
    low = np.maximum(0.0, -delta)
    high = np.minimum(1.0, 1 - delta)
    p2 = np.clip(np.where(three_roots, trigonometric, cardano) - shift, low, high)
    for _ in range(3):
        score, slope = _likelihood_score(x1, n1, x2, n2, delta, p2)
        with np.errstate(invalid="ignore"):
            step = np.where(
                np.isfinite(score) & (slope < 0), score / np.where(slope < 0, slope, -1), 0
            )
        p2 = np.clip(p2 - step, low, high)
    width = high - low
    at_low = _likelihood_score(x1, n1, x2, n2, delta, low + 1e-12 * width)[0] <= 0
    at_high = _likelihood_score(x1, n1, x2, n2, delta, high - 1e-12 * width)[0] >= 0
    p2 = np.where(at_low, low, np.where(at_high, high, p2))
    p2 = np.where(delta == 0, (x1 + x2) / total, p2)
    return p2 + delta, p2


def _likelihood_score(
    x1: Numbers, n1: int, x2: Numbers, n2: int, delta: Numbers, p2: Numbers
) -> tuple[np.ndarray, np.ndarray]:
    """d/dp2 of the log-likelihood under p1 = p2 + delta, and its (negative) derivative."""
    rates = (p2 + delta, 1 - p2 - delta, p2, 1 - p2)
    counts = (x1, n1 - x1, x2, n2 - x2)
    signs = (1, -1, 1, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = [np.where(c > 0, c / r, 0.0) for c, r in zip(counts, rates, strict=True)]
        score = sum(sign * term for sign, term in zip(signs, terms, strict=True))
        slope = -sum(np.where(c > 0, c / (r * r), 0.0) for c, r in zip(counts, rates, strict=True))
    return np.asarray(score), np.asarray(slope)


def _standardize(excess: np.ndarray, variance: np.ndarray) -> np.ndarray:
    excess = np.where(np.abs(excess) < 1e-12, 0.0, excess)
    safe = np.where(variance > 0, variance, 1.0)
    infinite = np.where(excess == 0, 0.0, np.copysign(np.inf, excess))
    return np.where(variance > 0, excess / np.sqrt(safe), infinite)


def score_statistic(x1: Numbers, n1: int, x2: Numbers, n2: int, delta: Numbers = 0.0) -> np.ndarray:
    """Score z for H0: p1 - p2 = delta from x1/n1 and x2/n2 (Farrington-Manning variance).

    Positive when the first rate exceeds the second by more than delta; it equals
    statsmodels' test_proportions_2indep(method="score", correction=False). Broadcasts
    over x1, x2 and delta. Where the restricted variance is zero the statistic is 0 if
    the estimate equals delta and ±inf otherwise.
    """
    p1, p2 = _restricted_rates(x1, n1, x2, n2, delta)
    excess = np.asarray(x1, dtype=float) / n1 - np.asarray(x2, dtype=float) / n2 - delta
    return _standardize(excess, p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)


@lru_cache(maxsize=256)
def _log_comb(n: int) -> np.ndarray:
    return np.array(
        [math.lgamma(n + 1) - math.lgamma(a + 1) - math.lgamma(n - a + 1) for a in range(n + 1)]
    )


_TINY = 1e-300


def _xlog(count: np.ndarray, probability: np.ndarray) -> np.ndarray:
    """count·log(probability), 0 where count is 0 (so 0·log 0 = 0): a zero probability is
    floored at 1e-300, whose logarithm times a positive count underflows to a zero term."""
    return count * np.log(np.maximum(probability, _TINY))


def _binomial(n: int, probability: np.ndarray) -> np.ndarray:
    """Binomial(a; n, p) for every a (last axis) and every p."""
    counts = np.arange(n + 1)
    p = np.clip(probability, 0.0, 1.0)[..., None]
    return np.exp(_log_comb(n) + _xlog(counts, p) + _xlog(n - counts, 1 - p))


def _maximize(
    tail: Callable[[np.ndarray], np.ndarray], low: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """Row-wise maximum of `tail` over [low, high]: a grid, then refinements around each of
    the grid's highest local peaks (the tail of a nuisance parameter often has several
    bumps of nearly equal height, and refining only the highest grid point can settle on
    the lower bump)."""
    first, *finer = _GRID
    grid = low[:, None] + (high - low)[:, None] * np.linspace(0.0, 1.0, first)
    values = tail(grid)
    rows = np.arange(len(low))
    best_value = values.max(axis=1)
    padded = np.pad(values, ((0, 0), (1, 1)), constant_values=-np.inf)
    peaks = np.where((values >= padded[:, :-2]) & (values >= padded[:, 2:]), values, -np.inf)
    for rank in range(_PEAKS):
        peak = np.argsort(-peaks, axis=1, kind="stable")[:, rank]
        span_low = grid[rows, np.maximum(peak - 1, 0)]
        span_high = grid[rows, np.minimum(peak + 1, first - 1)]
        for points in finer:
            fine = span_low[:, None] + (span_high - span_low)[:, None] * np.linspace(
                0.0, 1.0, points
            )
            fine_values = tail(fine)
            best = fine_values.argmax(axis=1)
            best_value = np.maximum(best_value, fine_values[rows, best])
            span_low = fine[rows, np.maximum(best - 1, 0)]
            span_high = fine[rows, np.minimum(best + 1, points - 1)]
    return np.minimum(best_value, 1.0)


def _regions(statistics: np.ndarray, observed: np.ndarray, less: bool) -> np.ndarray:
    """Tables at least as extreme as the observed one, per tested difference (rows)."""
    observed = observed[:, None]
    slack = np.where(np.isfinite(observed), _TIE * (1 + np.abs(np.nan_to_num(observed))), 0.0)
    if less:
        return statistics <= observed + slack
    return statistics >= observed - slack


def _chunked(
    one_sided: Callable[[np.ndarray], np.ndarray], deltas: np.ndarray, width: int
) -> np.ndarray:
    """`one_sided` over `deltas` in chunks, so nuisance grids times tables stay bounded."""
    size = max(1, _CELLS // (_GRID[0] * max(width, 1)))
    return np.concatenate(
        [one_sided(deltas[start : start + size]) for start in range(0, len(deltas), size)]
    )


def _check_sample(x: int, n: int) -> None:
    if n <= 0:
        raise ValueError(f"trials must be positive, got {n}")
    if not 0 <= x <= n:
        raise ValueError(f"successes must lie within [0, {n}], got {x}")


def _check_delta(delta: float) -> None:
    if not -1 <= delta <= 1:
        raise ValueError(f"a difference of rates lies within [-1, 1], got {delta}")


def _independent_tails(
    x1: int, n1: int, x2: int, n2: int, deltas: Numbers | list[float], less: bool
) -> np.ndarray:
    """One-sided exact p-values of p1 - p2 = d for every d in `deltas`."""

    def one_sided(chunk: np.ndarray) -> np.ndarray:
        first = np.arange(n1 + 1)[None, :, None]
        second = np.arange(n2 + 1)[None, None, :]
        statistics = score_statistic(first, n1, second, n2, chunk[:, None, None])
        observed = statistics[:, x1, x2]
        flat = statistics.reshape(len(chunk), -1)
        region = _regions(flat, observed, less).reshape(statistics.shape).astype(float)

        def tail(p2: np.ndarray) -> np.ndarray:
            weights = np.matmul(_binomial(n1, p2 + chunk[:, None]), region)
            return (weights * _binomial(n2, p2)).sum(axis=2)

        return _maximize(tail, np.maximum(0.0, -chunk), np.minimum(1.0, 1.0 - chunk))

    return _chunked(one_sided, np.atleast_1d(np.asarray(deltas, dtype=float)), n1 + n2 + 2)


@lru_cache(maxsize=16384)
def _independent_one_sided(x1: int, n1: int, x2: int, n2: int, delta: float, less: bool) -> float:
    return float(_independent_tails(x1, n1, x2, n2, [delta], less)[0])


def _combine(one_sided: Callable[[bool], float], alternative: Alternative) -> float:
    if alternative == "less":
        return one_sided(True)
    if alternative == "greater":
        return one_sided(False)
    if alternative != "two-sided":
        raise ValueError(f"alternative must be less, greater or two-sided, not {alternative!r}")
    return min(1.0, 2 * min(one_sided(True), one_sided(False)))


def exact_score_p_value(
    x1: int, n1: int, x2: int, n2: int, delta: float = 0.0, alternative: Alternative = "two-sided"
) -> float:
    """Exact unconditional p-value of H0: p1 - p2 = delta for independent x1/n1, x2/n2.

    `alternative="less"` tests against p1 - p2 < delta (the first agent lost more than
    -delta), "greater" against p1 - p2 > delta, "two-sided" doubles the smaller one-sided
    value. At delta = 0 the one-sided values equal scipy.stats.barnard_exact with the
    pooled statistic. Cached by table and difference.
    """
    _check_sample(x1, n1)
    _check_sample(x2, n2)
    _check_delta(delta)
    delta = float(delta)
    return _combine(lambda less: _independent_one_sided(x1, n1, x2, n2, delta, less), alternative)


def _limit(
    tails: Callable[[np.ndarray, bool], np.ndarray], estimate: float, alpha: float, side: Side
) -> float:
    """The one-sided confidence limit: where the one-sided p-value crosses `alpha`.

    The lower limit is the smallest difference below the estimate that the "greater" test
    keeps (p-value above `alpha`); the upper limit the largest above it that "less"
    keeps. The p-values grow towards the estimate; each round evaluates a row of
    candidates in one vectorized call and zooms into the crossing.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"the level must lie strictly between 0 and 1, got {1 - alpha}")
    less = side == "upper"
    bound = 1.0 if less else -1.0
    at_bound, at_estimate = tails(np.array([bound, estimate]), less)
    if at_bound > alpha or at_estimate <= alpha:
        return bound if at_bound > alpha else estimate
    rejected, kept = bound, estimate
    for _ in range(_SEARCH_ROUNDS):
        points = np.linspace(rejected, kept, _SEARCH_POINTS)[1:-1]
        above = tails(points, less) > alpha
        if not above.any():
            rejected = float(points[-1])
            continue
        first = int(above.argmax())
        kept = float(points[first])
        if first > 0:
            rejected = float(points[first - 1])
    return kept


def exact_score_limit(x1: int, n1: int, x2: int, n2: int, level: float, side: Side) -> float:
    """One-sided confidence limit for p1 - p2 at `level` (e.g. 0.975), inverting the test.

    The lower limit exceeds a value d exactly when `exact_score_p_value(..., d,
    "greater") <= 1 - level`; the upper limit falls below d exactly when the "less"
    p-value at d is at most 1 - level, to the 1e-5 the search resolves (the limit returned
    is the first difference found inside the confidence set, so it errs on the wide side).
    The upper limit of p1 - p2 is minus the lower limit of p2 - p1 (the statistic is
    antisymmetric in the samples), and lower limits are cached by table and level, so a
    summary pays for each distinct table once.
    """
    _check_sample(x1, n1)
    _check_sample(x2, n2)
    if side == "upper":
        return -_independent_lower_limit(x2, n2, x1, n1, float(level))
    return _independent_lower_limit(x1, n1, x2, n2, float(level))


@lru_cache(maxsize=65536)
def _independent_lower_limit(x1: int, n1: int, x2: int, n2: int, level: float) -> float:
    def tails(deltas: np.ndarray, less: bool) -> np.ndarray:
        return _independent_tails(x1, n1, x2, n2, deltas, less)

    return _limit(tails, x1 / n1 - x2 / n2, 1 - level, "lower")


def exact_score_interval(x1: int, n1: int, x2: int, n2: int, confidence: float = 0.95) -> Interval:
    """Two-sided interval for p1 - p2: the differences the two-sided exact score test keeps.

    Chan and Zhang's tail method, (1 - confidence)/2 on each side, so the interval
    excludes 0 exactly when the two-sided p-value at 0 is at most 1 - confidence.
    """
    level = 1 - (1 - confidence) / 2
    return (
        exact_score_limit(x1, n1, x2, n2, level, "lower"),
        exact_score_limit(x1, n1, x2, n2, level, "upper"),
    )


def paired_score_statistic(
    first_only: Numbers, second_only: Numbers, pairs: int, delta: Numbers = 0.0
) -> np.ndarray:
    """Tango's score z for H0: p1 - p2 = delta from the discordant pairs of `pairs` pairs.

    `first_only` counts pairs where the first passed and the second failed. The variance
    n(2·q + delta(1 - delta)) uses the restricted maximum-likelihood rate q of
    "second only" pairs. Broadcasts over the counts and delta.
    """
    b = np.asarray(first_only, dtype=float)
    c = np.asarray(second_only, dtype=float)
    delta = np.asarray(delta, dtype=float)
    w = delta * (2 * pairs - b + c) - (b + c)
    radicand = np.maximum(w * w + 8 * pairs * c * delta * (1 - delta), 0.0)
    q = np.clip((np.sqrt(radicand) - w) / (4 * pairs), np.maximum(0.0, -delta), (1 - delta) / 2)
    return _standardize(b - c - pairs * delta, pairs * (2 * q + delta * (1 - delta)))


@lru_cache(maxsize=64)
def _trinomial_tables(pairs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (first only, second only) with their sum at most `pairs`, and log multinomials."""
    b, c = np.meshgrid(np.arange(pairs + 1), np.arange(pairs + 1), indexing="ij")
    keep = b + c <= pairs
    b, c = b[keep], c[keep]
    log_coefficients = np.array(
        [
            math.lgamma(pairs + 1)
            - math.lgamma(i + 1)
            - math.lgamma(j + 1)
            - math.lgamma(pairs - i - j + 1)
            for i, j in zip(b.ravel().tolist(), c.ravel().tolist(), strict=True)
        ]
    )
    return b, c, log_coefficients


def _paired_tails(
    b: int, c: int, pairs: int, deltas: Numbers | list[float], less: bool
) -> np.ndarray:
    """One-sided exact paired p-values of p1 - p2 = d for every d in `deltas`."""
    first, second, log_coefficients = _trinomial_tables(pairs)
    concordant = pairs - first - second

    def one_sided(chunk: np.ndarray) -> np.ndarray:
        column = chunk[:, None]
        statistics = paired_score_statistic(first[None, :], second[None, :], pairs, column)
        observed = paired_score_statistic(b, c, pairs, chunk)
        region = _regions(statistics, observed, less)

        def tail(q: np.ndarray) -> np.ndarray:
            q = q[..., None]
            shift = column[..., None]
            terms = (
                log_coefficients
                + _xlog(first, np.clip(q + shift, 0.0, 1.0))
                + _xlog(second, q)
                + _xlog(concordant, np.clip(1 - 2 * q - shift, 0.0, 1.0))
            )
            return (np.exp(terms) * region[:, None, :]).sum(axis=2)

        return _maximize(tail, np.maximum(0.0, -chunk), np.maximum(0.0, (1 - chunk) / 2))

    return _chunked(one_sided, np.atleast_1d(np.asarray(deltas, dtype=float)), len(first))


@lru_cache(maxsize=16384)
def _paired_one_sided(b: int, c: int, pairs: int, delta: float, less: bool) -> float:
    return float(_paired_tails(b, c, pairs, [delta], less)[0])


def _check_pairs(both: int, first_only: int, second_only: int, neither: int) -> int:
    if min(both, first_only, second_only, neither) < 0:
        raise ValueError("paired counts must be non-negative")
    pairs = both + first_only + second_only + neither
    if pairs == 0:
        raise ValueError("the paired table is empty")
    return pairs


def paired_exact_p_value(
    both: int,
    first_only: int,
    second_only: int,
    neither: int,
    delta: float = 0.0,
    alternative: Alternative = "two-sided",
) -> float:
    """Exact unconditional p-value of H0: p1 - p2 = delta for paired pass/fail outcomes.

    Tango's statistic, its tail probability maximized over the rate of "second only"
    pairs. Only the discordant counts and the number of pairs matter.
    """
    pairs = _check_pairs(both, first_only, second_only, neither)
    _check_delta(delta)
    delta = float(delta)
    return _combine(
        lambda less: _paired_one_sided(first_only, second_only, pairs, delta, less), alternative
    )


def paired_exact_limit(
    both: int, first_only: int, second_only: int, neither: int, level: float, side: Side
) -> float:
    """One-sided confidence limit for paired p1 - p2 at `level`, inverting the paired test.

    As for independent samples, the upper limit is minus the lower limit with the agents
    swapped, and lower limits are cached.
    """
    pairs = _check_pairs(both, first_only, second_only, neither)
    if side == "upper":
        return -_paired_lower_limit(second_only, first_only, pairs, float(level))
    return _paired_lower_limit(first_only, second_only, pairs, float(level))


@lru_cache(maxsize=16384)
def _paired_lower_limit(first_only: int, second_only: int, pairs: int, level: float) -> float:
    def tails(deltas: np.ndarray, less: bool) -> np.ndarray:
        return _paired_tails(first_only, second_only, pairs, deltas, less)

    return _limit(tails, (first_only - second_only) / pairs, 1 - level, "lower")


def paired_exact_interval(
    both: int, first_only: int, second_only: int, neither: int, confidence: float = 0.95
) -> Interval:
    """Two-sided interval for paired p1 - p2 that agrees with `paired_exact_p_value`."""
    level = 1 - (1 - confidence) / 2
    return (
        paired_exact_limit(both, first_only, second_only, neither, level, "lower"),
        paired_exact_limit(both, first_only, second_only, neither, level, "upper"),
    )


def _critical_region(n1: int, n2: int, delta: float, alpha: float, less: bool) -> np.ndarray:
    """Tables the one-sided exact test rejects at `alpha`, as a boolean (n1+1, n2+1) array.

    For a fixed delta, the tail of a table is every table with a statistic at least as
    extreme, so the p-value can only fall as the statistic grows more extreme; a binary
    search over the distinct statistics finds the boundary with a dozen p-values.
    """
    first, second = np.meshgrid(np.arange(n1 + 1), np.arange(n2 + 1), indexing="ij")
    statistics = score_statistic(first, n1, second, n2, delta)
    oriented = -statistics if less else statistics
    order = np.argsort(-oriented, axis=None, kind="stable")
    values = oriented.ravel()[order]
    rejected, kept = -1, len(values)
    while kept - rejected > 1:
        middle = (rejected + kept) // 2
        a, b = np.unravel_index(order[middle], oriented.shape)
        if _independent_one_sided(int(a), n1, int(b), n2, delta, less) <= alpha:
            rejected = middle
        else:
            kept = middle
    if rejected < 0:
        return np.zeros(oriented.shape, dtype=bool)
    boundary = values[rejected]
    return (
        oriented >= boundary - _TIE * (1 + abs(boundary))
        if np.isfinite(boundary)
        else (oriented >= boundary)
    )


def exact_rejection_probability(
    n1: int, p1: float, n2: int, p2: float, delta: float, alpha: float, alternative: Alternative
) -> float:
    """Probability that the one-sided exact score test of p1 - p2 = delta rejects at `alpha`.

    The exact power of the per-case test (or, at a null configuration, its exact size)
    when the first sample's true rate is p1 and the second's p2: the binomial probability
    of the tables in the rejection region.
    """
    if alternative not in ("less", "greater"):
        raise ValueError("the rejection probability is for a one-sided test: less or greater")
    for rate in (p1, p2):
        if not 0 <= rate <= 1:
            raise ValueError(f"rates lie within [0, 1], got {rate}")
    _check_delta(delta)
    region = _critical_region(n1, n2, float(delta), alpha, alternative == "less")
    probabilities = np.outer(_binomial(n1, np.array(p1)), _binomial(n2, np.array(p2)))
    return float(min(1.0, probabilities[region].sum()))
