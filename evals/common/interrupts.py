"""Tell a real Ctrl-C apart from a `KeyboardInterrupt` that user code raised itself.

User code run while a suite loads (an agent's import, a tests generator) may raise
`KeyboardInterrupt` or `SystemExit`; that is the file's fault (exit 2). A SIGINT sent to
the harness raises the same exception, and must stay an interruption (exit 130).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


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


# Signals that stop an evaluation the way Ctrl-C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def stop_signals_as_interrupt() -> Iterator[None]:
    """Run the block with SIGTERM and SIGHUP stopping it as Ctrl-C does (so a CI job's
    cancel or a closed terminal stores what completed and marks the evaluation
    interrupted, exit 130): each is turned into SIGINT for whoever handles that (Python's
    default handler, or asyncio's, which cancels the running evaluation first). Main
    thread only; the previous handlers are restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if not callable(signal.getsignal(signal.SIGINT)):  # SIGINT ignored (a background job)
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)

    previous = {each: signal.getsignal(each) for each in (signal.SIGTERM, signal.SIGHUP)}
    for each in previous:
        signal.signal(each, handler)
    try:
        yield
    finally:
        _restore(previous)


@contextmanager
def signals_held() -> Iterator[None]:
    """Run the block (the harness storing what completed after a stop) deaf to further
    stop signals, so a second Ctrl-C cannot cut it short. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {each: signal.getsignal(each) for each in STOP_SIGNALS}
    for each in STOP_SIGNALS:
        signal.signal(each, signal.SIG_IGN)
    try:
        yield
    finally:
        _restore(previous)


def exit_at_next_stop(code: int) -> None:
    """For a process about to exit after an interruption: a further stop signal while it
    shuts down (threads joined, files flushed) exits at once with `code` instead of raising
    KeyboardInterrupt where nothing catches it. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        os._exit(code)

    for each in STOP_SIGNALS:
        signal.signal(each, handler)


def _restore(handlers: dict[signal.Signals, Any]) -> None:
    for each, handler in handlers.items():
        if handler is not None:
            signal.signal(each, handler)
