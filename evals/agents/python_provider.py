"""Python agents with promptfoo's provider contract, loaded in-process.

`file://agent.py` calls `call_api`; `file://agent.py:fn` calls `fn`. The function may be
sync or async and receives `(prompt, options, context)`. Sync functions run in worker
threads so a slow or hung agent never blocks the others.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext, normalize_response
from evals.agents.threads import ThreadCalls
from evals.agents.worker_client import WorkerAgent, wants_worker
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec

_MODULES: dict[Path, Any] = {}


def parse_python_ref(provider_id: str) -> tuple[str, str]:
    """Split `file://path.py:fn` or `python:path.py:fn` into (path, function name)."""
    ref = provider_id
    for prefix in ("file://", "python:"):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
            break
    path, _, fn = ref.partition(".py:")
    if fn:
        return path + ".py", fn
    return ref, "call_api"


def load_module(path: Path) -> Any:
    """Import a Python file once per process, with its directory importable."""
    path = path.resolve()
    if path in _MODULES:
        return _MODULES[path]
    name = f"evals_user_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SuiteError("cannot import this Python file", file=str(path))
    module = importlib.util.module_from_spec(spec)
    directory = str(path.parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _MODULES[path] = module
    return module


def load_function(path: Path, fn_name: str, what: str) -> Callable[..., Any]:
    """Fetch a named callable from a Python file, or explain what is missing."""
    try:
        module = load_module(path)
    except SuiteError:
        raise
    except Exception as exc:
        raise SuiteError(
            f"importing the {what} failed: {type(exc).__name__}: {exc}",
            file=str(path),
            fix="run `python " + str(path) + "` to see the full error",
        ) from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise SuiteError(
            f"the {what} has no function {fn_name}()",
            file=str(path),
            fix=f"define {fn_name}(prompt, options, context), or name another function after ':'",
        )
    return fn


class PythonAgent:
    """An in-process Python function behind promptfoo's `call_api` contract."""

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        rel, fn_name = parse_python_ref(spec.id)
        self.label = spec.label
        self.worker = (
            WorkerAgent(spec, root, root / rel, fn_name) if wants_worker(spec.config) else None
        )
        if self.worker is not None:
            return
        self.fn = load_function((root / rel), fn_name, "provider")
        self.is_async = inspect.iscoroutinefunction(self.fn)
        self.threads = ThreadCalls(f"evals-{spec.label}")
        self.options = {"id": spec.id, "label": spec.label, "config": spec.config}

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Call the function (in a thread when sync) and normalize its return."""
        if self.worker is not None:
            return await self.worker.call(prompt, context)
        ctx = context.promptfoo_context()
        if self.is_async:
            raw = await self.fn(prompt, self.options, ctx)
        else:
            raw = await self.threads.run(self.fn, prompt, self.options, ctx)
        return normalize_response(raw)

    async def aclose(self) -> None:
        """Stop the worker process, if the function runs in one, or the idle threads."""
        if self.worker is not None:
            await self.worker.aclose()
        else:
            self.threads.close()


class EchoAgent:
    """promptfoo's `echo` provider: returns the rendered prompt as the output."""

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        self.label = spec.label

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Echo the prompt back, with no tokens and no cost."""
        return AgentResponse(output=prompt, token_usage={"total": 0, "prompt": 0, "completion": 0})

    async def aclose(self) -> None:
        """Nothing to release."""
