"""numpy loaded by the harness with OpenBLAS's idle threads asleep.

When numpy loads, OpenBLAS starts a thread per core, and each spins for a while waiting
for work before it sleeps: about a tenth of a second of CPU taken from the other core,
where the store process and the agents run. The harness's statistics make no call that
BLAS spreads over threads, so its own load of numpy asks the threads to sleep as soon as
they are idle (`OPENBLAS_THREAD_TIMEOUT=4`, the shortest spin); the pool keeps every
thread for the agents that call BLAS in this process.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

SPIN_VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
SHORTEST_SPIN = "4"
"""OpenBLAS's idle threads spin 2**n cycles before sleeping; 4 is the smallest n."""


@contextlib.contextmanager
def idle_blas_threads_asleep() -> Iterator[None]:
    """Around the harness's first import of numpy: `OPENBLAS_THREAD_TIMEOUT` set to the
    shortest spin while the library loads (read then, once), and taken away after, so
    agents started as processes get the environment they were given. A value the user
    set is kept, and nothing changes once numpy is loaded."""
    if "numpy" in sys.modules or SPIN_VARIABLE in os.environ:
        yield
        return
    os.environ[SPIN_VARIABLE] = SHORTEST_SPIN
    try:
        yield
    finally:
        os.environ.pop(SPIN_VARIABLE, None)
