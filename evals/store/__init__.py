"""The results store: evaluations, runs, grades and gate decisions in SQLite or PostgreSQL.

The names of `__init__.pyi` load SQLAlchemy on first use only, so `evals.store.process`
(the harness's side of the store process) stays light.
"""

from evals.common.stubs import public_names

__getattr__, __dir__ = public_names(__name__, __file__)
