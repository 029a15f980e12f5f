"""The results store: evaluations, runs, grades and gate decisions in SQLite or PostgreSQL.

The names of `__init__.pyi` load SQLAlchemy on first use only, so `evals.store.process`
(the harness's side of the store process) stays light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
