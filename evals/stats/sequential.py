"""Exact group-sequential boundaries from the joint distribution of the statistics at the looks.

A statistic looked at after information fractions t_1 < ... < t_K = 1 has, under the
canonical joint distribution (Jennison and Turnbull 2000, §3.1), standard normal Z_k with
corr(Z_j, Z_k) = sqrt(t_j / t_k) for j <= k: Z_k·sqrt(t_k) is a Brownian motion observed at
the looks. A one-sided design rejects at the first look k with Z_k >= c_k. Splitting alpha
across the looks by the union bound (each look's nominal level equal to its spend) ignores
that correlation and loses power; here each look's boundary is set so that the chance of
*first* crossing at that look equals its spend exactly (Lan and DeMets 1983), which makes
every nominal level after the first larger than its spend.

The crossing probabilities come from the recursive numerical integration of Armitage,
McPherson and Rowe (1969) as laid out by Jennison and Turnbull (2000, ch. 19): the density
of the continuing paths on a grid, carried from look to look by the normal increment,
integrated with Simpson's rule. Pure numpy, so the analysis need not import scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

import numpy as np

_GRID = 401  # odd: Simpson's rule
_SPAN = 9.0  # standard deviations below the mean where the continuing density is cut


def _check_fractions(fractions: Sequence[float]) -> None:
    if not fractions or any(b <= a for a, b in pairwise(fractions)):
        raise ValueError("information fractions must increase")
    if fractions[0] <= 0 or fractions[-1] > 1 + 1e-12:
        raise ValueError("information fractions must lie in (0, 1]")


def _simpson_weights(step: float) -> np.ndarray:
    weights = np.ones(_GRID)
    weights[1:-1:2] = 4.0
    weights[2:-1:2] = 2.0
    return weights * step / 3


def _upper_tail(x: np.ndarray) -> np.ndarray:
    return np.array([0.5 * math.erfc(v / math.sqrt(2)) for v in x.tolist()])


class _Paths:
    """The density of the Brownian paths that have not crossed any boundary so far."""

    def __init__(self, fraction: float) -> None:
        self.time = fraction
        self.points = np.array([0.0])
        self.mass = np.array([1.0])  # density times Simpson weight; a point mass at 0 first

    def crossing(self, fraction: float, z: float) -> float:
        """The chance of being above z (in Z scale) at `fraction`, having not crossed before."""
        if math.isinf(z):
            return 0.0
        scale = math.sqrt(fraction - self.time)
        bound = z * math.sqrt(fraction)
        return float(np.dot(self.mass, _upper_tail((bound - self.points) / scale)))

    def advance(self, fraction: float, z: float) -> None:
        """Carry the continuing density to `fraction` and cut it at boundary z."""
        scale = math.sqrt(fraction - self.time)
        sd = math.sqrt(fraction)
        upper = z * sd if math.isfinite(z) else _SPAN * sd
        lower = min(-_SPAN * sd, upper - 1.0)
        points = np.linspace(lower, upper, _GRID)
        weights = _simpson_weights(points[1] - points[0])
        gaps = (points[:, None] - self.points[None, :]) / scale
        density = np.exp(-0.5 * gaps**2) @ self.mass / (scale * math.sqrt(2 * math.pi))
        self.points, self.mass, self.time = points, density * weights, fraction


def crossing_probabilities(fractions: Sequence[float], boundaries: Sequence[float]) -> list[float]:
    """Per look, the chance under the canonical joint distribution that Z_k >= boundaries[k]
    at look k with no earlier crossing (math.inf: the look cannot reject).

    Their sum is the design's one-sided error; computed by recursive numerical integration.
    """
    _check_fractions(fractions)
    if len(boundaries) != len(fractions):
        raise ValueError("need one boundary per look")
    paths = _Paths(0.0)
    crossed = []
    for fraction, z in zip(fractions, boundaries, strict=True):
        crossed.append(paths.crossing(fraction, z))
        paths.advance(fraction, z)
    return crossed


def _boundary(paths: _Paths, fraction: float, spend: float) -> float:
    if spend <= 0:
        return math.inf
    low, high = -_SPAN, _SPAN
    if paths.crossing(fraction, low) < spend:
        raise ValueError(f"a look cannot spend {spend}: more than the paths still open")
    for _ in range(50):
        middle = (low + high) / 2
        if paths.crossing(fraction, middle) > spend:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@lru_cache(maxsize=256)
def _levels(fractions: tuple[float, ...], spends: tuple[float, ...]) -> tuple[float, ...]:
    paths = _Paths(0.0)
    levels = []
    for fraction, spend in zip(fractions, spends, strict=True):
        z = _boundary(paths, fraction, spend)
        levels.append(0.5 * math.erfc(z / math.sqrt(2)) if math.isfinite(z) else 0.0)
        paths.advance(fraction, z)
    return tuple(levels)


def sequential_levels(fractions: Sequence[float], spends: Sequence[float]) -> list[float]:
    """The one-sided nominal level of each look (1 - Φ(c_k)) whose boundaries c_k make the
    chance of first crossing at look k equal `spends[k]` under the canonical joint
    distribution (Lan and DeMets 1983, with exact boundaries).

    The first level equals the first spend; later ones exceed their spends because a path
    that would cross there has often crossed before. A spend of 0 gives level 0 (no
    rejection at that look). Cached: a run asks for the same design at every look.
    """
    _check_fractions(fractions)
    if len(spends) != len(fractions) or any(s < 0 for s in spends):
        raise ValueError("need one non-negative spend per look")
    if not 0 < sum(spends) < 0.5:
        raise ValueError(f"the spends must sum to an error in (0, 1/2), got {sum(spends)}")
    return list(_levels(tuple(fractions), tuple(spends)))
