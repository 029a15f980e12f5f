"""The results store: evaluations, runs, grades and gate decisions in SQLite or PostgreSQL.

The names below load SQLAlchemy on first use only, so `evals.store.process` (the harness's
side of the store process) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals.store.store import Store, StoredEvaluation, open_store, open_viewer_store

__all__ = ["Store", "StoredEvaluation", "open_store", "open_viewer_store"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from evals.store import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
