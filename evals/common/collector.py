"""How the harness's processes use Python's cyclic garbage collector.

The harness and its store process keep many long-lived objects (the suite, the plan, the
records; the modules imported) and make many short-lived, acyclic ones per run. At
Python's default threshold (700 allocations) the cyclic collector walks the long-lived
ones again and again.
"""

from __future__ import annotations

import gc

GC_THRESHOLDS = (20_000, 50, 50)
"""Collect far less often than Python's default (as mypy does): cyclic garbage is still
collected, at a fraction of the time."""


def collect_rarely() -> None:
    """Set `GC_THRESHOLDS` for this process."""
    gc.set_threshold(*GC_THRESHOLDS)


def settle_long_lived() -> None:
    """Collect rarely, and move every object alive now (the modules imported, the store
    opened) out of the collector's sight for good: a process that serves until it exits
    keeps them anyway, and each full collection would walk them all again."""
    collect_rarely()
    gc.freeze()
