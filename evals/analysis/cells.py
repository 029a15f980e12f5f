"""The runs of one agent on one case, counted the way every statistic counts them.

An errored run is an outcome: it counts as a failed run in the pass rate, unless the
suite leaves its kind out (`gates.exclude_errors`, e.g. infrastructure errors), and then
the cell remembers how many it left out so reports can say so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from evals.model.results import RunRecord


@dataclass(slots=True)
class Cell:
    """The runs of one agent on one case, with their outcome counts."""

    records: list[RunRecord] = field(default_factory=list)
    passes: int = 0
    fails: int = 0
    errors: int = 0
    excluded: int = 0
    excluded_kinds: frozenset[str] = frozenset()

    @property
    def counted(self) -> int:
        """Runs the pass rate is over: passes, fails and errors not excluded."""
        return self.passes + self.fails + self.errors - self.excluded

    @property
    def rate(self) -> float:
        """Pass rate over the counted runs (an errored run counts as a failed one)."""
        return self.passes / self.counted

    def outcomes(self) -> list[RunRecord]:
        """The counted runs (excluded errors left out), in repeat order."""
        return sorted(
            (
                r
                for r in self.records
                if r.status != "error" or r.error_kind not in self.excluded_kinds
            ),
            key=lambda r: (r.key.repeat, r.key.prompt_id),
        )


Cells = dict[tuple[str, str], Cell]


def count_cells(records: Sequence[RunRecord], exclude: Collection[str]) -> Cells:
    """The records grouped by (agent, case id) and counted; errors of a kind in `exclude`
    are left out of the pass rates."""
    kinds = frozenset(exclude)
    cells: Cells = defaultdict(lambda: Cell(excluded_kinds=kinds))
    for record in records:
        cell = cells[(record.key.agent, record.key.case_id)]
        cell.records.append(record)
        if record.status == "pass":
            cell.passes += 1
        elif record.status == "fail":
            cell.fails += 1
        else:
            cell.errors += 1
            cell.excluded += record.error_kind in kinds
    return cells


def mean(values: Sequence[float]) -> float | None:
    """The mean, or None for no values."""
    return sum(values) / len(values) if values else None
