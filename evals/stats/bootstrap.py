"""Candidate/baseline ratios of tail latency and cost from a paired cluster bootstrap.

Latency and cost are skewed and runs of a case are alike, so the resamples draw whole
cases, the same ones for both agents (Davison, A. C. and Hinkley, D. V. (1997), Bootstrap
Methods and their Application, section 3.8), and each agent's interval reads percentiles
of its resampled statistic. A fixed seed keeps reports reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from evals.stats.quantiles import weighted_percentile

Interval = tuple[float, float]


# Case-weight cells held at once: resamples are drawn and reduced in blocks of rows,
# so memory stays bounded (each array of a block 8 MB) however many cases and runs an
# evaluation has; the results do not depend on the block size.
_BLOCK_CELLS = 1_000_000


Sorted = tuple[np.ndarray, np.ndarray, np.ndarray]


def _sorted_values(
    groups: Sequence[Sequence[float]], counts: Sequence[Sequence[int]] | None = None
) -> Sorted:
    """All values in ascending (stable) order, with the index of the group of each and
    how many runs each stands for (`counts`, a quantile sketch's item weights; 1 without)."""
    values = np.fromiter((v for g in groups for v in g), dtype=float)
    owners = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    runs = (
        np.ones(len(values))
        if counts is None
        else np.fromiter((c for g in counts for c in g), dtype=float)
    )
    order = np.argsort(values, kind="stable")
    return values[order], owners[order], runs[order]


def _resampled_quantiles(
    groups: Sequence[Sequence[float]],
    weights: np.ndarray,
    quantile: float,
    ordered: Sorted | None = None,
) -> np.ndarray:
    """The weighted inverted-CDF quantile for each row of case weights.

    Only the upper part of the sorted values is accumulated per resample; the weight
    below it comes from a matrix product, and rows whose quantile falls below that part
    are recomputed in full, so the result is exact. `ordered` is `_sorted_values(groups)`
    when the caller has it already.
    """
    values, owners, runs = ordered if ordered is not None else _sorted_values(groups)
    totals = weights @ np.bincount(owners, runs, minlength=len(groups))
    thresholds = quantile * totals - 1e-9
    start = max(0, int(len(values) * (1 - 3 * (1 - quantile))) - 1)
    below = weights @ np.bincount(owners[:start], runs[:start], minlength=len(groups))
    positions = start + (
        below[:, None] + np.cumsum(weights[:, owners[start:]] * runs[start:], axis=1)
        < thresholds[:, None]
    ).sum(axis=1)
    redo = below >= thresholds
    if redo.any():
        cumulative = np.cumsum(weights[redo][:, owners] * runs, axis=1)
        positions[redo] = (cumulative < thresholds[redo][:, None]).sum(axis=1)
    return values[np.minimum(positions, len(values) - 1)]


def _weight_blocks(
    case_count: int, resamples: int, seed: int, values: int = 0
) -> Iterator[np.ndarray]:
    """`_case_weights` in consecutive blocks of rows, sized for `values` values in all.

    The generator continues one random stream across blocks, so the blocks stacked are
    exactly the weights drawn in one go.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_CELLS // max(case_count, values, 1))
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        draws = rng.integers(0, case_count, size=(size, case_count))
        draws += np.arange(size)[:, None] * case_count
        counts = np.bincount(draws.ravel(), minlength=size * case_count)
        yield counts.reshape(size, case_count).astype(float)


def _case_weights(case_count: int, resamples: int, seed: int) -> np.ndarray:
    """How many times each case is drawn in each resample (rows sum to the case count)."""
    return np.vstack(list(_weight_blocks(case_count, resamples, seed)))


def _linear_quantiles(samples: np.ndarray, quantiles: Sequence[float]) -> list[float]:
    """numpy's default (linear) quantiles, without `np.quantile`, whose first call imports
    numpy.ma (a hundredth of a second of every run's start-up)."""
    ordered = np.sort(samples.ravel())
    last = len(ordered) - 1
    result = []
    for q in quantiles:
        position = q * last
        below = math.floor(position)
        above = min(below + 1, last)
        low, high = float(ordered[below]), float(ordered[above])
        result.append(low + (high - low) * (position - below))
    return result


def _percentile_interval(samples: np.ndarray, confidence: float) -> Interval:
    alpha = 1 - confidence
    low, high = _linear_quantiles(samples, [alpha / 2, 1 - alpha / 2])
    return low, high


@dataclass(slots=True)
class PairedBootstrap:
    """Each agent's statistic with its interval, and candidate/baseline with its interval.

    `log_ratio_se` is the standard deviation of the log ratio over the resamples where
    both statistics are positive: with it, exp(log ratio ± z·SE) gives the ratio's limits
    at any level (the normal interval on the log scale with a bootstrap standard error,
    Davison and Hinkley 1997, section 5.2), which a gate needs at its own level.
    """

    candidate: float
    candidate_interval: Interval
    baseline: float
    baseline_interval: Interval
    ratio: float | None
    ratio_interval: Interval | None
    log_ratio_se: float | None = None


def _check_paired(
    candidate: Sequence[Sequence[float]], baseline: Sequence[Sequence[float]]
) -> None:
    if len(candidate) != len(baseline) or not candidate:
        raise ValueError("need the same, non-zero number of cases for both agents")
    if any(not c or not b for c, b in zip(candidate, baseline, strict=True)):
        raise ValueError("every case needs values for both agents")


def _ratio(
    top: float, bottom: float, tops: np.ndarray, bottoms: np.ndarray, confidence: float
) -> tuple[float | None, Interval | None, float | None]:
    valid = bottoms > 0
    if bottom <= 0 or not valid.any():
        return None, None, None
    positive = valid & (tops > 0)
    log_se = None
    if top > 0 and positive.sum() > 1:
        log_se = float(np.std(np.log(tops[positive] / bottoms[positive]), ddof=1))
    return top / bottom, _percentile_interval(tops[valid] / bottoms[valid], confidence), log_se


def paired_quantile_bootstrap(
    candidate: Sequence[Sequence[float]],
    baseline: Sequence[Sequence[float]],
    quantile: float = 0.95,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    counts: tuple[Sequence[Sequence[int]], Sequence[Sequence[int]]] | None = None,
) -> PairedBootstrap:
    """Both agents' quantiles and their ratio, resampling the same cases for both.

    `candidate[i]` and `baseline[i]` are one case's values for each agent; resampling
    cases jointly lets shared case difficulty cancel in the ratio. `counts`, when given,
    holds how many runs each value stands for (candidate's, baseline's: a quantile
    sketch's item weights); without, every value is one run.
    """
    _check_paired(candidate, baseline)
    ordered = (
        _sorted_values(candidate, counts[0] if counts else None),
        _sorted_values(baseline, counts[1] if counts else None),
    )
    size = max(len(ordered[0][0]), len(ordered[1][0]))
    blocks = [
        (
            _resampled_quantiles(candidate, weights, quantile, ordered[0]),
            _resampled_quantiles(baseline, weights, quantile, ordered[1]),
        )
        for weights in _weight_blocks(len(candidate), resamples, seed, size)
    ]
    tops = np.concatenate([top for top, _ in blocks])
    bottoms = np.concatenate([bottom for _, bottom in blocks])
    top, bottom = (
        weighted_percentile(values.tolist(), runs.astype(int).tolist(), quantile)
        for values, _, runs in ordered
    )
    ratio, ratio_interval, log_se = _ratio(top, bottom, tops, bottoms, confidence)
    return PairedBootstrap(
        top,
        _percentile_interval(tops, confidence),
        bottom,
        _percentile_interval(bottoms, confidence),
        ratio,
        ratio_interval,
        log_se,
    )


def paired_mean_bootstrap(
    candidate: Sequence[Sequence[float]],
    baseline: Sequence[Sequence[float]],
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> PairedBootstrap:
    """Both agents' mean per run (e.g. cost) and their ratio, resampling cases jointly."""
    _check_paired(candidate, baseline)
    return paired_total_bootstrap(
        ([sum(g) for g in candidate], [len(g) for g in candidate]),
        ([sum(g) for g in baseline], [len(g) for g in baseline]),
        confidence,
        resamples,
        seed,
    )


def paired_total_bootstrap(
    candidate: tuple[Sequence[float], Sequence[int]],
    baseline: tuple[Sequence[float], Sequence[int]],
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> PairedBootstrap:
    """`paired_mean_bootstrap` from each case's (total, runs) for each agent: the per-case
    sums an evaluation keeps instead of every run's value."""
    if len(candidate[0]) != len(baseline[0]) or not candidate[0]:
        raise ValueError("need the same, non-zero number of cases for both agents")
    if min(*candidate[1], *baseline[1]) < 1:
        raise ValueError("every case needs values for both agents")
    totals = [(np.array(sums), np.array(sizes)) for sums, sizes in (candidate, baseline)]
    resampled: list[list[np.ndarray]] = [[], []]
    for weights in _weight_blocks(len(candidate[0]), resamples, seed):
        for means, (sums, sizes) in zip(resampled, totals, strict=True):
            means.append((weights @ sums) / (weights @ sizes))
    (top, tops), (bottom, bottoms) = (
        (sums.sum() / sizes.sum(), np.concatenate(means))
        for means, (sums, sizes) in zip(resampled, totals, strict=True)
    )
    ratio, ratio_interval, log_se = _ratio(top, bottom, tops, bottoms, confidence)
    return PairedBootstrap(
        float(top),
        _percentile_interval(tops, confidence),
        float(bottom),
        _percentile_interval(bottoms, confidence),
        ratio if ratio is None else float(ratio),
        ratio_interval,
        log_se,
    )
