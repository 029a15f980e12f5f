"""An evaluation's runs in a store, named without opening it (no SQLAlchemy import until
they are read)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from evals.model.evaluation import RunOrder
from evals.model.results import RunRecord


@dataclass(frozen=True, slots=True)
class StoredRuns:
    """An evaluation's runs in a store, read again a batch at a time (`iter_runs`): where
    the reports that list every run read them."""

    url: str | None
    evaluation_id: str

    def iter_runs(self, order: RunOrder = "plan") -> Iterator[RunRecord]:
        """Every stored run of the evaluation, whole, in `order`."""
        from evals.store import open_store

        store = open_store(self.url, read_only=True)
        try:
            yield from store.iter_runs(self.evaluation_id, order)
        finally:
            store.close()
