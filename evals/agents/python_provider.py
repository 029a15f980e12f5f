"""Python agents with promptfoo's provider contract, loaded in-process.

`file://agent.py` calls `call_api`; `file://agent.py:fn` calls `fn`. The function may be
sync or async and receives `(prompt, options, context)`. Sync functions run in worker
threads so a slow or hung agent never blocks the others.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext, normalize_response
from evals.agents.threads import ThreadCalls
from evals.agents.worker_client import WorkerAgent, wants_worker
from evals.common.files import FILE_PREFIX, load_function, split_ref
from evals.common.yaml12 import load_yaml_text
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec


def fresh(response: AgentResponse) -> AgentResponse:
    """`response` not marked cached, whatever `cached` the function returned: promptfoo's
    Python provider sets `cached` itself, false on every call it makes and true only on a
    hit of its own cache (the harness's response cache marks its hits the same way)."""
    return dataclasses.replace(response, cached=False) if response.cached else response


class PythonAgent:
    """An in-process Python function behind promptfoo's `call_api` contract."""

    def __init__(
        self, spec: ProviderSpec, root: Path, function: Callable[..., Any] | None = None
    ) -> None:
        """The agent of `spec`; `function`, when given, is called instead of loading the
        file `spec.id` names (an agent imported by the caller, e.g. `package.module:fn`)."""
        self.label = spec.label
        self.worker = None
        self.load_error: str | None = None
        try:
            config = {"basePath": os.path.relpath(root), **config_files_loaded(spec.config, root)}
        except ConfigFileError as exc:  # each call errs, as promptfoo's provider fails to start
            config, self.load_error = spec.config, str(exc)
        spec = dataclasses.replace(spec, config=config)
        if function is None and self.load_error is None:
            rel, fn_name = split_ref(spec.id)
            fn_name = fn_name or "call_api"
            if wants_worker(spec.config):
                self.worker = WorkerAgent(spec, root, root / rel, fn_name)
                return
            try:
                function = load_function(
                    root / rel, fn_name, "provider", "prompt, options, context"
                )
            except SuiteError as exc:
                self.load_error = load_problem(root / rel, fn_name, exc)
        self.fn = function
        self.is_async = function is not None and inspect.iscoroutinefunction(function)
        self.threads = ThreadCalls(f"evals-{spec.label}")
        self.options = {"id": spec.id, "label": spec.label, "config": spec.config}

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Call the function (in a thread when sync) and normalize its return, as a fresh
        response (see `fresh`)."""
        if self.worker is not None:
            return fresh(await self.worker.call(prompt, context))
        if self.fn is None or self.load_error is not None:  # the file or its config could
            return AgentResponse(error=self.load_error)  # not be loaded: each call errs
        ctx = context.promptfoo_context()
        if self.is_async:
            raw = await self.fn(prompt, self.options, ctx)
        else:
            raw = await self.threads.run(self.fn, prompt, self.options, ctx)
        return fresh(normalize_response(raw))

    async def aclose(self) -> None:
        """Stop the worker process, if the function runs in one, or the idle threads."""
        if self.worker is not None:
            await self.worker.aclose()
        else:
            self.threads.close()


class ConfigFileError(Exception):
    """A `file://` reference in a provider's config that cannot be loaded."""


def _config_file(ref: str, root: Path) -> Any:
    rel, function = split_ref(ref)
    path = root / rel
    if not path.is_file():
        raise ConfigFileError(f"Error: ENOENT: no such file or directory, open '{path}'")
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return json.loads(path.read_bytes().decode("utf-8"))
        if suffix in (".yaml", ".yml"):
            return load_yaml_text(path.read_bytes().decode("utf-8"))
        if suffix == ".py":
            return load_function(path, function or "get_config", "provider config")()
        if suffix in (".txt", ".md", ""):
            return path.read_bytes().decode("utf-8", errors="replace")
    except (ValueError, SuiteError) as exc:
        raise ConfigFileError(f"Error loading file reference {ref}: {exc}") from None
    except Exception as exc:  # the config function raised: the suite's code, any error
        raise ConfigFileError(f"Error loading file reference {ref}: {exc!r}") from None
    raise ConfigFileError(f"Error: Unsupported file extension: {path.suffix}")


def config_files_loaded(config: Any, root: Path) -> Any:
    """A Python provider's config with each `file://` reference in it (at any depth)
    replaced by the file's content, as promptfoo's processConfigFileReferences does: JSON
    and YAML parsed, a Python file's function (`get_config` by default) called, text
    (`.txt`, `.md`, no extension) as written; ConfigFileError otherwise."""
    if isinstance(config, str) and config.startswith(FILE_PREFIX):
        return _config_file(config, root)
    if isinstance(config, list):
        return [config_files_loaded(item, root) for item in config]
    if isinstance(config, dict):
        return {key: config_files_loaded(item, root) for key, item in config.items()}
    return config


def load_problem(path: Path, function: str, exc: SuiteError) -> str:
    """The error of each row of a Python provider that could not be loaded, worded as
    promptfoo's Python provider words it where it can tell (a missing function)."""
    if path.is_file() and exc.message.startswith("the provider has no function"):
        return f"Error: Python error: Function '{function}' not found in module '{path.stem}'"
    return f"Error: Python error: {exc.message} ({path})"


class EchoAgent:
    """promptfoo's `echo` provider: returns the rendered prompt as the output."""

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        self.label = spec.label
        self.delay_s = spec.delay_ms / 1000.0

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Echo the prompt back at no cost, after the provider's `delay` (as promptfoo's
        echo waits it inside the call, besides the wait after every call)."""
        if self.delay_s > 0:
            await asyncio.sleep(self.delay_s)
        return AgentResponse(
            output=prompt,
            token_usage={"total": 0, "prompt": 0, "completion": 0, "numRequests": 1},
            cost=0.0,
        )

    async def aclose(self) -> None:
        """Nothing to release."""
