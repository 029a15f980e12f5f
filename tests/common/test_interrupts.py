"""Stop signals: SIGTERM and SIGHUP stop the harness as Ctrl-C does; cleanup is deaf to them."""

from __future__ import annotations

import os
import signal
import time

import pytest

from evals.common.interrupts import signals_held, stop_signals_as_interrupt


def _wait_for_signal() -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.01)
    raise AssertionError("the signal did not stop the block")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_raise_keyboard_interrupt(stop):
    before = signal.getsignal(stop)
    with pytest.raises(KeyboardInterrupt), stop_signals_as_interrupt():
        os.kill(os.getpid(), stop)
        _wait_for_signal()
    assert signal.getsignal(stop) == before


def test_a_stop_signal_stops_even_when_sigint_is_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt), stop_signals_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            _wait_for_signal()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_held_signals_do_not_cut_cleanup_short():
    finished = False
    with stop_signals_as_interrupt():
        with signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
            finished = True
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert finished
