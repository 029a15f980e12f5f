"""A judge's agreement with human labels: accuracy and Cohen's kappa, per rubric.

Agreement is reported with a Wilson interval and Cohen's kappa with its asymptotic
interval (Fleiss, Cohen and Everitt 1969). Items the judge could not grade are counted
apart, never as agreement. `min_kappa` / `min_accuracy` (in the calibration file or on
the command line) fail the judge when it agrees less than that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from evals.grade.calibration import CalibrationItem
from evals.stats import wilson_interval
from evals.stats.distributions import two_sided_z


@dataclass(slots=True)
class Agreement:
    """Judge-versus-human agreement over a set of items (one rubric, or all of them)."""

    rubric: str
    both_pass: int = 0
    judge_only: int = 0
    human_only: int = 0
    both_fail: int = 0
    errors: int = 0

    def add(self, judge: bool, human: bool) -> None:
        """Count one graded item."""
        if judge and human:
            self.both_pass += 1
        elif judge:
            self.judge_only += 1
        elif human:
            self.human_only += 1
        else:
            self.both_fail += 1

    @property
    def n(self) -> int:
        """Items the judge graded."""
        return self.both_pass + self.judge_only + self.human_only + self.both_fail

    @property
    def agreed(self) -> int:
        """Items where judge and human gave the same verdict."""
        return self.both_pass + self.both_fail

    def accuracy(self, confidence: float = 0.95) -> tuple[float, float, float]:
        """Share of agreement with its Wilson interval: (estimate, low, high)."""
        if self.n == 0:
            return math.nan, math.nan, math.nan
        low, high = wilson_interval(self.agreed, self.n, confidence)
        return self.agreed / self.n, low, high

    def kappa(self, confidence: float = 0.95) -> tuple[float, float, float]:
        """Cohen's kappa with its asymptotic (non-null) interval: (estimate, low, high)."""
        return cohen_kappa(
            [[self.both_pass, self.judge_only], [self.human_only, self.both_fail]], confidence
        )


def cohen_kappa(table: list[list[int]], confidence: float = 0.95) -> tuple[float, float, float]:
    """Kappa of a square agreement table (rows: first rater, columns: second) and its interval.

    The standard error is Fleiss, Cohen and Everitt's (1969) large-sample one; with perfect
    chance agreement (one category only) kappa is undefined and NaN is returned.
    """
    n = sum(sum(row) for row in table)
    k = len(table)
    if n == 0:
        return math.nan, math.nan, math.nan
    p = [[cell / n for cell in row] for row in table]
    rows = [sum(p[i]) for i in range(k)]
    cols = [sum(p[i][j] for i in range(k)) for j in range(k)]
    observed = sum(p[i][i] for i in range(k))
    expected = sum(rows[i] * cols[i] for i in range(k))
    if expected >= 1.0:
        return math.nan, math.nan, math.nan
    kappa = (observed - expected) / (1 - expected)
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(k))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(k) for j in range(k) if i != j
    )
    c = (kappa - expected * (1 - kappa)) ** 2
    se = math.sqrt(max(0.0, a + b - c)) / ((1 - expected) * math.sqrt(n))
    z = two_sided_z(confidence)
    return kappa, kappa - z * se, kappa + z * se


def tally(verdicts: Iterable[tuple[CalibrationItem, bool | None]]) -> list[Agreement]:
    """Agreement per rubric, then over all items (last)."""
    per_rubric: dict[str, Agreement] = {}
    overall = Agreement("all")
    for item, judge in verdicts:
        row = per_rubric.setdefault(item.rubric, Agreement(item.rubric))
        for target in (row, overall):
            if judge is None:
                target.errors += 1
            else:
                target.add(judge, item.human)
    return [*per_rubric.values(), overall]


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def render_table(rows: list[Agreement]) -> str:
    """The agreement table the `evals calibrate` command prints."""
    header = f"{'rubric':<40} {'n':>4} {'err':>4} {'accuracy [95% CI]':>24} {'kappa [95% CI]':>26}"
    lines = [header, "-" * len(header)]
    for row in rows:
        acc, acc_lo, acc_hi = row.accuracy()
        kap, kap_lo, kap_hi = row.kappa()
        name = row.rubric if len(row.rubric) <= 40 else row.rubric[:37] + "..."
        accuracy = f"{_fmt(acc)} [{_fmt(acc_lo)}, {_fmt(acc_hi)}]"
        kappa = f"{_fmt(kap)} [{_fmt(kap_lo)}, {_fmt(kap_hi)}]"
        lines.append(f"{name:<40} {row.n:>4} {row.errors:>4} {accuracy:>24} {kappa:>26}")
    return "\n".join(lines)


def below_minimum(
    overall: Agreement, min_kappa: float | None, min_accuracy: float | None
) -> list[str]:
    """Why the judge's overall agreement fails the minimums (empty when it passes)."""
    problems = []
    kappa = overall.kappa()[0]
    accuracy = overall.accuracy()[0]
    if min_kappa is not None and not kappa >= min_kappa:
        problems.append(f"kappa {_fmt(kappa)} < min_kappa {min_kappa}")
    if min_accuracy is not None and not accuracy >= min_accuracy:
        problems.append(f"accuracy {_fmt(accuracy)} < min_accuracy {min_accuracy}")
    return problems
