"""Output piped to a reader that stops reading (`evals plugins | head -1`) ends the command
quietly with 141, as a shell reports a command a closed pipe ended, not with a traceback
and a harness fault."""

from __future__ import annotations

import os
import subprocess
import sys

from evals.cli import READER_LEFT


def test_a_reader_that_stops_reading_ends_the_command_without_a_fault(tmp_path):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes a line
    try:
        finished = subprocess.run(
            [sys.executable, "-m", "evals", "plugins"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": os.getcwd()},
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert finished.returncode == READER_LEFT, finished.stderr
    assert "Traceback" not in finished.stderr
    assert "harness fault" not in finished.stderr
    assert "Exception ignored" not in finished.stderr
