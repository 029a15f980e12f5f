"""The results store: evaluations, runs, grades and gate decisions in SQLite or PostgreSQL."""

from evals.store.store import Store, StoredEvaluation, open_store

__all__ = ["Store", "StoredEvaluation", "open_store"]
