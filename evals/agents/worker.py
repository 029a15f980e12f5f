"""The worker process that hosts a Python provider outside the harness.

Run as `python worker.py AGENT_FILE FUNCTION`. It imports the file once, then reads one
JSON request per line on stdin (`{"id", "prompt", "options", "context"}`, or
`{"cancel": id}`) and writes one JSON reply per line on its own copy of stdout
(`{"id", "result"}` or `{"id", "error", "kind"}`, kind `exit` for a BaseException
that is not an Exception). Calls run concurrently: sync functions
in their own threads, async functions on one event loop. Anything the agent prints goes
to stderr, so it can never corrupt the protocol. Standard library only, so the worker
also runs under another interpreter (`pythonExecutable`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import inspect
import json
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, TextIO

# The longest reply line the harness reads; a larger result is answered as malformed.
REPLY_LIMIT = 64 << 20

_CAMEL = {
    "token_usage": "tokenUsage",
    "finish_reason": "finishReason",
    "stop_reason": "stopReason",
    "latency_ms": "latencyMs",
    "log_probs": "logProbs",
}


def load_function(path: str, name: str) -> Callable[..., Any]:
    """Import the agent file with its directory importable and return the named function."""
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location("evals_worker_agent", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise AttributeError(f"{path} has no function {name}()")
    return fn


def to_wire(result: Any) -> Any:
    """A provider response as JSON-ready data; dataclass responses use promptfoo's keys."""
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        data = dataclasses.asdict(result)
        return {_CAMEL.get(k, k): v for k, v in data.items()}
    return result


def _outcome(pair: tuple[Any, BaseException | None]) -> Any:
    """The result of an async call, or what it raised, raised again."""
    result, error = pair
    if error is not None:
        raise error
    return result


class Worker:
    """Serves calls to one function over the JSON-lines protocol."""

    def __init__(self, fn: Callable[..., Any], out: TextIO) -> None:
        self.fn = fn
        self.out = out
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.tasks: dict[Any, Any] = {}
        if inspect.iscoroutinefunction(fn):
            self.loop = asyncio.new_event_loop()
            threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def send(self, message: dict[str, Any]) -> None:
        """Write one reply line."""
        line = json.dumps(message, ensure_ascii=False)
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()

    def reply(self, call_id: Any, produce: Callable[[], Any]) -> None:
        """Run one call and send its result or its failure."""
        try:
            result = produce()
        except BaseException as exc:  # SystemExit included: it ends this call, not the worker
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            kind = "exception" if isinstance(exc, Exception) else "exit"
            self.send({"id": call_id, "error": detail, "kind": kind})
            return
        try:
            line = json.dumps({"id": call_id, "result": to_wire(result)}, ensure_ascii=False)
            if not line.isascii():
                line.encode("utf-8")  # a lone surrogate cannot be written
        except RecursionError:
            self._malformed(call_id, "result is nested too deeply to encode as JSON")
            return
        except UnicodeEncodeError:
            self._malformed(call_id, "result holds a lone surrogate, which is not valid text")
            return
        except (TypeError, ValueError) as exc:
            self._malformed(call_id, f"result is not JSON: {exc}")
            return
        if len(line) > REPLY_LIMIT:
            self._malformed(call_id, f"result is larger than {REPLY_LIMIT >> 20} MiB as JSON")
            return
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()

    def _malformed(self, call_id: Any, message: str) -> None:
        self.send({"id": call_id, "error": message, "kind": "malformed"})

    def start(self, request: dict[str, Any]) -> None:
        """Begin one call without waiting for it."""
        call_id = request["id"]
        args = (request["prompt"], request["options"], request["context"])
        if self.loop is None:
            thread = threading.Thread(
                target=self.reply, args=(call_id, lambda: self.fn(*args)), daemon=True
            )
            thread.start()
            return
        future = asyncio.run_coroutine_threadsafe(self._call(args), self.loop)
        self.tasks[call_id] = future
        future.add_done_callback(lambda f: self._finish_async(call_id, f))

    async def _call(self, args: tuple[Any, ...]) -> tuple[Any, BaseException | None]:
        """(result, None) or (None, what the function raised): a SystemExit or
        KeyboardInterrupt must not reach the loop, which would stop serving every call."""
        try:
            return await self.fn(*args), None
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return None, exc
        except BaseException as exc:
            return None, exc

    def _finish_async(self, call_id: Any, future: Any) -> None:
        self.tasks.pop(call_id, None)
        if not future.cancelled():
            self.reply(call_id, lambda: _outcome(future.result()))

    def cancel(self, call_id: Any) -> None:
        """Cancel an async call the harness gave up on (sync calls cannot be interrupted)."""
        future = self.tasks.pop(call_id, None)
        if future is not None:
            future.cancel()


def main(argv: list[str]) -> None:
    """Serve until stdin closes."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        fn = load_function(argv[1], argv[2])
    except BaseException as exc:
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        fatal = {"fatal": f"importing the provider failed: {detail}"}
        out.write(json.dumps({**fatal, "exit": not isinstance(exc, Exception)}) + "\n")
        out.flush()
        os._exit(1)
    worker = Worker(fn, out)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "cancel" in request:
            worker.cancel(request["cancel"])
        else:
            worker.start(request)
    out.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
