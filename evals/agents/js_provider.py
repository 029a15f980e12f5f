"""JavaScript providers (`file://provider.js`), run in the sandbox as promptfoo runs them.

promptfoo loads a provider file whose name ends in `.js`, `.cjs`, `.mjs`, `.ts`, `.cts` or
`.mts` with `import()` and builds its default export as a class:
`new Provider({id, config, env})`, `id` being the provider's custom id or its path and
`config` the provider's config plus `basePath`. Each run calls
`callApi(prompt, context, options)`; the response's `output`, `error`, `tokenUsage`,
`cost`, `metadata`, ... are promptfoo's provider response. The same file runs here in the
JavaScript sandbox (`evals.common.jsengine`'s scripts realm, `evals.common.jsfiles` for the
module formats): no network, files, `require` or environment; timers run on the sandbox's
virtual clock, so an `await` on a timer costs no wall time.

A file that does not load, a constructor that throws, a default export that is not a class
or an instance without `id()` stops promptfoo before any run; here the suite does not load
(exit 2) with the file and the error. An instance without `callApi` errs on every run, as
in promptfoo. At run time a `callApi` that throws, runs out of time or memory, or answers
`undefined` or `null` is an error row with promptfoo's message; an answer with no `output`
(a bare string, `{}`) is promptfoo's failed "No output" row.

The instance lives in the realm of one thread per agent, so its calls run one at a time
and see the state earlier calls left, as promptfoo's one instance does.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext, normalize_response
from evals.agents.python_provider import fresh
from evals.common import jsengine, jsfiles
from evals.common.files import FILE_PREFIX, split_ref
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec


def provider_options(spec: ProviderSpec) -> str:
    """The constructor's options as promptfoo passes them, as JSON text: the provider's id
    and its config with `basePath` (the suite's folder, as promptfoo's `.`)."""
    return jsengine.to_json({"id": spec.id, "config": {**spec.config, "basePath": "."}, "env": {}})


@dataclass(frozen=True, slots=True)
class ProviderNames:
    """What a JavaScript provider's instance says of itself: its `id()`, its own `label`
    (None when it sets none) and whether it has a `callApi` method."""

    id: str
    label: str | None
    has_call_api: bool


def provider_names(spec: ProviderSpec, path: Path) -> ProviderNames:
    """Load the provider's file and build its instance, as promptfoo does before any run.

    SuiteError (exit 2) naming the file when the file does not parse, its constructor
    throws, its default export is not a class or the instance has no `id()`."""
    try:
        names = jsengine.call(
            "providerNames", jsfiles.module_source(path), str(path), provider_options(spec)
        )
    except (jsengine.JavaScriptError, jsfiles.ModuleFileMissing) as exc:
        raise SuiteError(
            f"provider {spec.id!r} does not load: {jsfiles.error_text(exc)}",
            line=spec.line,
            fix="export a class with id() and async callApi(prompt, context, options), as "
            "promptfoo's custom JavaScript providers do (module.exports = class ... or "
            "export default class ...)",
        ) from None
    return ProviderNames(str(names["id"]), names["label"], bool(names["callApi"]))


def name_javascript_provider(spec: ProviderSpec, path: Path) -> ProviderNames:
    """Check a JavaScript provider while the suite loads and name it as promptfoo's rows
    do: its own `label`, else the suite's label, else its `id()`. Raises SuiteError when
    it does not load (see `provider_names`) or has a `:function` part."""
    if split_ref(spec.id)[1] is not None:
        raise SuiteError(
            f"provider {spec.id!r}: a JavaScript provider is the class its file exports; "
            "promptfoo does not read a function name after the file",
            line=spec.line,
            fix=f"write {FILE_PREFIX}{split_ref(spec.id)[0]} and export the provider class",
        )
    names = provider_names(spec, path)
    if names.label:
        spec.label = names.label
    elif spec.label == spec.id:
        spec.label = names.id
    return names


def response_of(raw: Any) -> AgentResponse:
    """A `callApi` answer as promptfoo reads it: `undefined` or `null` is promptfoo's
    TypeError (an error row); anything that is not an object has no output (promptfoo's
    "No output"); an object's `error` counts when it is truthy, its `output` when it is
    neither null nor undefined. MalformedResponse for values the harness cannot keep."""
    if raw is None:
        return AgentResponse(error="TypeError: Cannot convert undefined or null to object")
    if not isinstance(raw, dict):
        return AgentResponse()
    error = raw.get("error")
    if not error:
        error = None
    elif not isinstance(error, str):
        error = json.dumps(error, ensure_ascii=False, default=str)
    return fresh(normalize_response({**raw, "output": raw.get("output"), "error": error}))


class JavaScriptAgent:
    """A promptfoo JavaScript provider class, built and called in the sandbox."""

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        self.label = spec.label
        self.path = root / split_ref(spec.id)[0]
        self.options = provider_options(spec)
        self.thread = ThreadPoolExecutor(1, thread_name_prefix=f"evals-js-{spec.label}")
        self.source: str | None = None

    def _call(self, prompt: str, context: str) -> Any:
        """One call in the sandbox, with the file as it was at the agent's first call (an
        edit during the evaluation does not change the agent under test)."""
        if self.source is None:
            self.source = jsfiles.module_source(self.path)
        path = str(self.path)
        return jsengine.call("providerCall", self.source, path, self.options, prompt, context)

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """`callApi(prompt, context)` on the agent's thread; what the provider throws, or a
        sandbox limit it reaches, is the run's error (`Name: message`, as promptfoo's row
        starts)."""
        text = jsengine.to_json(context.promptfoo_context())
        loop = asyncio.get_running_loop()
        try:
            raw = await loop.run_in_executor(self.thread, self._call, prompt, text)
        except (jsengine.JavaScriptError, jsfiles.ModuleFileMissing) as exc:
            return AgentResponse(error=jsfiles.error_text(exc))
        return response_of(raw)

    async def aclose(self) -> None:
        """Let the agent's thread end once its call in flight, if any, returns."""
        self.thread.shutdown(wait=False)
