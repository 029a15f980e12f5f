"""The latencies of one agent on one case, kept in bounded memory.

A case's latencies are kept exactly while it has at most `EXACT_RUNS` runs of an agent,
which covers every usual number of repeats: the p95 latency, its interval and the latency
ratio's bootstrap are then the same numbers as over every value. Beyond that the values go
into a KLL quantile sketch (Karnin, Lang and Liberty (2016), Optimal quantile
approximation in streams; Apache DataSketches' `kll_doubles_sketch`, k = `SKETCH_K`) of
bounded size, whose items stand for several runs each. A quantile read from such items
has a rank error of at most `RANK_ERROR` of the runs they stand for, with 99 %
probability (DataSketches' a-priori bound for k = 200, single-sided ranks), so a pooled
p95 over many cases is the value of a run whose rank lies within `RANK_ERROR` of the 95th
percentile's. docs/statistics.md states how each latency statistic uses this.
"""

from __future__ import annotations

from array import array
from typing import Any

EXACT_RUNS = 200
SKETCH_K = 200
RANK_ERROR = 0.0133
"""`kll_doubles_sketch.get_normalized_rank_error(200, False)`, rounded up."""


class LatencySample:
    """One case's latencies for one agent: every value up to `EXACT_RUNS`, then a KLL
    sketch of them (`items` gives the values with how many runs each stands for)."""

    __slots__ = ("_sketch", "_values")

    def __init__(self) -> None:
        self._values = array("d")
        self._sketch: Any = None

    def add(self, value: float) -> None:
        """Count one run's latency."""
        if self._sketch is not None:
            self._sketch.update(value)
            return
        self._values.append(value)
        if len(self._values) > EXACT_RUNS:
            from datasketches import kll_doubles_sketch

            self._sketch = kll_doubles_sketch(SKETCH_K)
            for kept in self._values:
                self._sketch.update(kept)
            self._values = array("d")

    @property
    def exact(self) -> bool:
        """True while every value is kept."""
        return self._sketch is None

    def __len__(self) -> int:
        return len(self._values) if self._sketch is None else int(self._sketch.n)

    def items(self) -> tuple[list[float], list[int]]:
        """(values, how many runs each stands for): every value with 1 while exact, the
        sketch's items and weights beyond."""
        if self._sketch is None:
            return self._values.tolist(), [1] * len(self._values)
        pairs = list(self._sketch)
        return [float(value) for value, _ in pairs], [int(weight) for _, weight in pairs]
