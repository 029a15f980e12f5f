"""Tell a real Ctrl-C apart from a `KeyboardInterrupt` that user code raised itself.

User code run while a suite loads (an agent's import, a tests generator) may raise
`KeyboardInterrupt` or `SystemExit`; that is the file's fault (exit 2). A SIGINT sent to
the harness raises the same exception, and must stay an interruption (exit 130).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class SignalSeen:
    """Whether SIGINT reached the process while user code ran."""

    received = False


@contextmanager
def watch_sigint() -> Iterator[SignalSeen]:
    """Run the block with a SIGINT handler that records the signal, then raises
    KeyboardInterrupt as Python's own handler does. Off the main thread, or when someone
    else handles SIGINT, nothing is installed and `received` stays False."""
    seen = SignalSeen()
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield seen
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        seen.received = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)
