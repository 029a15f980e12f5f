"""The harness's companion processes (the store process, the JSON report process).

A companion is `python -m MODULE ARGS`, spoken to through its stdin and answering on its
stdout; a message is a length-prefixed pickle of a plain tuple (`frame`), read with
`Inbox`. `Companion` is the harness's side: it writes messages, waits for answers, and
turns a failure of the child (an error answer, an exit) into a `HarnessFault`.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, NoReturn

from evals.model.errors import HarnessFault, SuiteError

_HEADER = struct.Struct(">I")
# Room in a pipe for messages on their way (Linux lets a pipe grow to this).
PIPE_BYTES = 1 << 20


def frame(message: tuple[Any, ...]) -> bytes:
    """A message as the companion processes read it: a length-prefixed pickle."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


def answer(out: IO[bytes], *message: Any) -> None:
    """A companion's answer to the harness: `("ok", value)`, `("error", text)` or
    `("invalid", SuiteError fields)`."""
    out.write(frame(message))
    out.flush()


def answer_failure(out: IO[bytes], exc: Exception) -> int:
    """Tell the harness why the companion stopped; its exit code.

    A SuiteError (an input the user can fix: a store of a newer schema, an evaluation id
    taken) travels as itself, so the harness raises it again and exits 2.
    """
    if isinstance(exc, SuiteError):
        answer(out, "invalid", (exc.message, exc.file, exc.line, exc.fix))
    else:
        answer(out, "error", f"{type(exc).__name__}: {exc}")
    return 1


class Inbox:
    """Messages from a pipe, waiting no longer than asked for the next one (None: forever).

    The store process (and the report process) reads the harness's messages with it, the
    harness the answers.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.start = 0
        self.closed = False

    def next(self, timeout: float | None) -> tuple[Any, ...] | None:
        """The next message; None when none came within `timeout` or the pipe closed."""
        while True:
            message = self._parse()
            if message is not None or self.closed:
                return message
            if not select.select([self.fd], [], [], timeout)[0]:
                return None
            chunk = os.read(self.fd, PIPE_BYTES)
            self.closed = not chunk
            del self.buffer[: self.start]
            self.start = 0
            self.buffer += chunk

    def _parse(self) -> tuple[Any, ...] | None:
        available = len(self.buffer) - self.start
        if available < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self.buffer, self.start)
        if available < _HEADER.size + size:
            return None
        body = self.start + _HEADER.size
        self.start = body + size
        return pickle.loads(memoryview(self.buffer)[body : self.start])


class Companion:
    """A companion process: `python -m module *args` with this checkout importable.

    `failure` prefixes the message of an error the child answers ("storing runs failed");
    `name` names the child when it exits on its own ("the store process").
    """

    def __init__(self, module: str, args: list[str], *, name: str, failure: str) -> None:
        self.name = name
        self.failure_prefix = failure
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": package_root + (os.pathsep + path if path else "")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            env=env,
        )
        with contextlib.suppress(ImportError, AttributeError, OSError):  # Linux; else default size
            import fcntl

            fcntl.fcntl(self.process.stdin.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[union-attr]
        self._answers = Inbox(self.process.stdout.fileno())  # type: ignore[union-attr]
        self.failure: str | None = None
        self._written = False
        self._released = False
        self._closed = False

    def write(self, framed: bytes) -> None:
        """Send framed messages; HarnessFault when the child has failed."""
        if self.failure is not None:
            raise HarnessFault(self.failure)
        self._written = True
        try:
            self.process.stdin.write(framed)  # type: ignore[union-attr]
            self.process.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            self.fail()

    def request(self, message: tuple[Any, ...]) -> Any:
        """Send a message and wait for its answer's value (HarnessFault on an error)."""
        self.write(frame(message))
        return self.reply()

    def reply(self) -> Any:
        """Wait for the answer to the message sent last (`write`), and return its value
        (HarnessFault on an error)."""
        answer = self._answers.next(None)
        if answer is None:
            self.fail()
        status, value = answer
        if status == "invalid":
            self._refused(value)
        if status != "ok":
            self.failure = f"{self.failure_prefix}: {value}"
            raise HarnessFault(self.failure)
        return value

    def _refused(self, fields: tuple[str, str | None, int | None, str | None]) -> NoReturn:
        """Raise the SuiteError the child refused an input with; the child is done."""
        error = SuiteError(*fields)
        self.failure = f"{self.failure_prefix}: {error.message}"
        raise error

    def fail(self) -> NoReturn:
        """Raise the child's failure: its error answer, or how it exited and its stderr."""
        answer = self._answers.next(None)
        self.process.wait()
        if answer is not None and answer[0] == "invalid":
            self._refused(answer[1])
        if answer is not None and answer[0] == "error":
            self.failure = f"{self.failure_prefix}: {answer[1]}"
        else:
            self._errors.seek(0)
            detail = self._errors.read().decode(errors="replace").strip()
            self.failure = f"{self.name} exited with code {self.process.returncode}" + (
                f": {detail}" if detail else ""
            )
        raise HarnessFault(self.failure)

    def release(self) -> None:
        """Close the child's input: it finishes what it holds and exits, while the harness
        goes on (`close` waits for the exit).

        A child never sent a message (the suite was invalid, or loading it was
        interrupted) holds nothing: it is killed instead, so the harness exits at once
        rather than wait for the child to finish importing what it would have needed.
        """
        if self._released:
            return
        self._released = True
        if not self._written:
            with contextlib.suppress(OSError):
                self.process.kill()
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]

    def close(self) -> None:
        """`release` the child and wait for it to exit."""
        if self._closed:
            return
        self._closed = True
        self.release()
        self.process.wait()
        self.process.stdout.close()  # type: ignore[union-attr]
        self._errors.close()
