"""Messages between the harness and its companion processes (store, JSON report).

A message is a length-prefixed pickle of a plain tuple; `Inbox` reads them from a pipe.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
from typing import Any

_HEADER = struct.Struct(">I")
# Room in a pipe for messages on their way (Linux lets a pipe grow to this).
PIPE_BYTES = 1 << 20


def frame(message: tuple[Any, ...]) -> bytes:
    """A message as the companion processes read it: a length-prefixed pickle."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


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
