"""Uncertainty of an average over cases whose repeats are correlated.

References:
- Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
  evaluations. arXiv:2411.00640 (section 2.2: clustered standard errors).
- Cameron, A. C. and Miller, D. L. (2015). A practitioner's guide to cluster-robust
  inference. Journal of Human Resources 50, 317-372 (the G/(G-1) small-sample factor).
- Shrout, P. E. and Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
  reliability. Psychological Bulletin 86, 420-428; unequal group sizes: Donner, A. (1986),
  International Statistical Review 54, 67-82 (one-way ANOVA estimator with n0).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence


def _groups(scores: Sequence[float], clusters: Sequence[Hashable]) -> dict[Hashable, list[float]]:
    if len(scores) != len(clusters):
        raise ValueError("scores and clusters must have the same length")
    groups: dict[Hashable, list[float]] = {}
    for score, cluster in zip(scores, clusters, strict=True):
        groups.setdefault(cluster, []).append(score)
    return groups


def clustered_se(scores: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """Cluster-robust standard error of the mean score (Miller 2024, eq. 6).

    Runs of the same case are correlated, so the naive SE understates uncertainty. The
    sandwich variance sum_c (sum_{i in c} (s_i - mean))^2 / n^2 is multiplied by G/(G-1)
    (G clusters), the usual CR1 small-sample factor; this matches statsmodels OLS with
    cov_type='cluster' on an intercept-only model, whose (N-1)/(N-K) factor is 1 there.
    With equal cluster sizes it equals the SE of the mean of per-case means.
    """
    groups = _groups(scores, clusters)
    count = len(scores)
    if len(groups) < 2:
        raise ValueError("a clustered standard error needs at least two clusters")
    mean = sum(scores) / count
    meat = sum((sum(group) - len(group) * mean) ** 2 for group in groups.values())
    cluster_count = len(groups)
    return math.sqrt(meat / count**2 * cluster_count / (cluster_count - 1))


def intra_class_correlation(scores: Sequence[float], clusters: Sequence[Hashable]) -> float | None:
    """ICC(1) from a one-way ANOVA: the share of score variance that is between cases.

    Near 1, repeats of a case agree and extra repeats add little; near 0, repeats are
    as informative as new cases. Unequal cluster sizes use Donner's n0. Negative estimates
    (sampling noise around zero) are reported as 0. None when it cannot be estimated.
    """
    groups = _groups(scores, clusters)
    group_count, count = len(groups), len(scores)
    if group_count < 2 or count <= group_count:
        return None
    mean = sum(scores) / count
    between = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values())
    within = sum(sum((s - sum(g) / len(g)) ** 2 for s in g) for g in groups.values())
    mean_square_between = between / (group_count - 1)
    mean_square_within = within / (count - group_count)
    size_0 = (count - sum(len(g) ** 2 for g in groups.values()) / count) / (group_count - 1)
    denominator = mean_square_between + (size_0 - 1) * mean_square_within
    if denominator <= 0:
        return None
    return min(1.0, max(0.0, (mean_square_between - mean_square_within) / denominator))


def mean_of_means_variance(case_means: Sequence[float]) -> float | None:
    """Variance of the average of per-case means, the case as the unit: s^2 / C.

    Cases are a sample from the tasks the agent will meet, so their spread is the
    uncertainty of the suite score. None with fewer than two cases.
    """
    count = len(case_means)
    if count < 2:
        return None
    mean = sum(case_means) / count
    return sum((m - mean) ** 2 for m in case_means) / (count - 1) / count


def pearson_correlation(first: Sequence[float], second: Sequence[float]) -> float:
    """Pearson correlation of paired values; 0 when either side has no spread."""
    count = len(first)
    if count != len(second) or count < 2:
        return 0.0
    mean_1, mean_2 = sum(first) / count, sum(second) / count
    cross = sum((a - mean_1) * (b - mean_2) for a, b in zip(first, second, strict=True))
    spread_1 = sum((a - mean_1) ** 2 for a in first)
    spread_2 = sum((b - mean_2) ** 2 for b in second)
    if spread_1 <= 0 or spread_2 <= 0:
        return 0.0
    return max(-1.0, min(1.0, cross / math.sqrt(spread_1 * spread_2)))


def clustered_se_of_counts(successes: Sequence[int], sizes: Sequence[int]) -> float:
    """`clustered_se` of pass/fail runs (1 or 0) from each case's passes and runs: the
    same number, from the counts an evaluation keeps instead of every run."""
    count = sum(sizes)
    if len(sizes) < 2:
        raise ValueError("a clustered standard error needs at least two clusters")
    mean = sum(successes) / count
    meat = sum((passed - size * mean) ** 2 for passed, size in zip(successes, sizes, strict=True))
    return math.sqrt(meat / count**2 * len(sizes) / (len(sizes) - 1))


def intra_class_correlation_of_counts(
    successes: Sequence[int], sizes: Sequence[int]
) -> float | None:
    """`intra_class_correlation` of pass/fail runs (1 or 0) from each case's passes and
    runs; equal to it up to the rounding of the order its sums are taken in."""
    group_count, count = len(sizes), sum(sizes)
    if group_count < 2 or count <= group_count:
        return None
    mean = sum(successes) / count
    pairs = list(zip(successes, sizes, strict=True))
    between = sum(size * (passed / size - mean) ** 2 for passed, size in pairs)
    within = sum(
        passed * (1 - passed / size) ** 2 + (size - passed) * (passed / size) ** 2
        for passed, size in pairs
    )
    mean_square_between = between / (group_count - 1)
    mean_square_within = within / (count - group_count)
    size_0 = (count - sum(size**2 for size in sizes) / count) / (group_count - 1)
    denominator = mean_square_between + (size_0 - 1) * mean_square_within
    if denominator <= 0:
        return None
    return min(1.0, max(0.0, (mean_square_between - mean_square_within) / denominator))
