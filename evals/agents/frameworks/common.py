"""What every framework adapter shares: provider ids, loading the agent object, the run being
served, and the trajectory recorder that turns model and tool calls into a response.

A provider id is `FRAMEWORK:MODULE:ATTRIBUTE`. MODULE is a dotted module importable from the
suite's directory (`my_app.agent`) or a Python file relative to it (`agents/triage.py`);
ATTRIBUTE (dotted for nested objects) is the framework's agent object, or a function that
builds one, called with the provider's `config` when it takes an argument.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext
from evals.common.files import load_module
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.model.trajectory import Step
from evals.vendors.messages import ChatPromptError, read_arguments, read_value
from evals.vendors.prices import call_cost, provider_price


@dataclass(frozen=True, slots=True)
class Framework:
    """A supported framework: its provider prefix, import name and package extra."""

    prefix: str
    package: str
    extra: str
    what: str
    distribution: str


FRAMEWORKS: dict[str, Framework] = {
    f.prefix: f
    for f in (
        Framework("openai-agents:", "agents", "openai-agents", "an agents.Agent", "openai-agents"),
        Framework(
            "langgraph:", "langgraph", "langgraph", "a compiled graph or a Runnable", "langgraph"
        ),
        Framework(
            "pydantic-ai:", "pydantic_ai", "pydantic-ai", "a pydantic_ai.Agent", "pydantic-ai-slim"
        ),
    )
}

STOP_DONE = "done"
STOP_MAX_STEPS = "max_steps"
STOP_BUDGET = "budget_exhausted"
STOP_GUARDRAIL = "guardrail"
STOP_APPROVAL = "approval_required"
STOP_ERROR = "error"

_CURRENT: ContextVar[CallContext | None] = ContextVar("evals_current_run", default=None)


def current_run() -> CallContext | None:
    """The run a framework adapter is serving in this context, or None outside one.

    Models and tools called by the framework see it (contexts follow tasks and the
    framework's worker threads), so a scripted model or a stochastic tool can draw from
    the run's `seed` and a tool can read the case's `vars`.
    """
    return _CURRENT.get()


@contextmanager
def serving(context: CallContext) -> Iterator[None]:
    """Make `context` the current run for the duration of the block."""
    token = _CURRENT.set(context)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def parse_framework_id(provider_id: str) -> tuple[Framework, str, str]:
    """(framework, module, attribute) of `langgraph:my_app.agent:graph`.

    Raises SuiteError, with the expected form, when the id has no module or attribute.
    """
    framework = next(f for p, f in FRAMEWORKS.items() if provider_id.startswith(p))
    module, sep, attribute = provider_id[len(framework.prefix) :].strip().rpartition(":")
    if not sep or not module.strip() or not attribute.strip():
        raise SuiteError(
            f"provider {provider_id!r} does not name a module and an object",
            fix=f"write {framework.prefix}my_app.agent:agent or {framework.prefix}agent.py:agent",
        )
    return framework, module.strip(), attribute.strip()


def _is_file(module: str) -> bool:
    return module.endswith(".py") or "/" in module


def module_file(module: str, root: Path) -> Path | None:
    """The file beside the suite that a framework id's module names (`agent.py`, or the
    dotted `my_app.agent` as `my_app/agent.py` or its package's `__init__.py`), else None."""
    if _is_file(module):
        path = root / module
        return path if path.is_file() else None
    local = root.joinpath(*module.split("."))
    return next((p for p in (local.with_suffix(".py"), local / "__init__.py") if p.is_file()), None)


def _module_exists(module: str, root: Path) -> bool:
    if module_file(module, root) is not None:
        return True
    if _is_file(module):
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_framework_provider(spec: ProviderSpec, root: Path) -> None:
    """Reject, before any run, a framework id whose package or module is missing."""
    framework, module, _ = parse_framework_id(spec.id)
    if importlib.util.find_spec(framework.package) is None:
        raise SuiteError(
            f"provider {spec.id!r} needs the {framework.extra} package, which is not installed",
            line=spec.line,
            fix=f"install evals with its [{framework.extra}] extra "
            f"(pip install -e '.[{framework.extra}]' in its checkout) "
            f"or pip install {framework.distribution}",
        )
    if not _module_exists(module, root):
        raise SuiteError(
            f"provider {spec.id!r}: no module {module!r} next to the suite or installed",
            line=spec.line,
            fix="name a dotted module importable from the suite's directory or a .py file in it",
        )


def _import(module: str, root: Path) -> Any:
    if _is_file(module):
        return load_module(root / module)
    directory = str(root.resolve())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(module)


def _build(value: Any, config: dict[str, Any]) -> Any:
    parameters = inspect.signature(value).parameters
    return value(config) if parameters else value()


def load_framework_object(spec: ProviderSpec, root: Path, accepts: Callable[[Any], bool]) -> Any:
    """The agent object a framework id names; a factory function is called once here.

    Import failures, missing attributes and objects of the wrong kind are SuiteErrors
    naming the module and the fix, raised before any run.
    """
    framework, module, attribute = parse_framework_id(spec.id)
    try:
        value = _import(module, root)
    except SuiteError:
        raise
    except Exception as exc:
        raise SuiteError(
            f"importing {module!r} for provider {spec.label!r} failed: {type(exc).__name__}: {exc}",
            line=spec.line,
            fix=f"run `python -c 'import {module}'` from the suite's directory to see why",
        ) from None
    for name in attribute.split("."):
        if not hasattr(value, name):
            raise SuiteError(
                f"{module!r} has no {attribute!r} (provider {spec.label!r})",
                line=spec.line,
                fix=f"define {attribute} in {module}, or name another object after the last ':'",
            )
        value = getattr(value, name)
    if not accepts(value) and inspect.isfunction(value):
        try:
            value = _build(value, dict(spec.config))
        except Exception as exc:
            raise SuiteError(
                f"{module}:{attribute}() raised {type(exc).__name__}: {exc}", line=spec.line
            ) from None
    if not accepts(value):
        raise SuiteError(
            f"{module}:{attribute} is a {type(value).__name__}, not {framework.what}",
            line=spec.line,
            fix=f"point {framework.prefix} at {framework.what}, or a function returning one",
        )
    return value


def jsonable(value: Any) -> Any:
    """A framework value (pydantic model, dataclass, message object) as plain JSON data."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def arguments_dict(value: Any) -> dict[str, Any] | None:
    """Tool arguments as the dict a Step holds (`{"input": value}` for a bare value)."""
    return read_arguments(jsonable(value), plain_text=True).value


@dataclass(slots=True)
class Outcome:
    """How a framework run ended: its output, stop reason and, when it failed, the error."""

    output: Any = None
    stop_reason: str = STOP_DONE
    error: str | None = None
    finish_reason: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class Recorder:
    """The trajectory of one run, filled from framework callbacks (thread-safe).

    Model steps are priced with the provider's `cost`/`inputCost`/`outputCost` config or
    the list price of the model; tool steps are keyed by call id so start, end and error
    callbacks find their step whatever order parallel calls finish in.
    """

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.steps: list[Step] = []
        self._by_key: dict[Any, Step] = {}
        self._lock = threading.Lock()

    def model_started(self, key: Any, name: str, **metadata: Any) -> Step:
        """Open a model step (its end fills tokens and cost)."""
        step = Step(
            kind="model",
            name=name,
            started_at=time.time(),
            metadata={k: v for k, v in metadata.items() if v is not None},
        )
        with self._lock:
            self.steps.append(step)
            self._by_key[key] = step
        return step

    def model_ended(
        self,
        key: Any,
        *,
        name: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        text: Any = None,
        **metadata: Any,
    ) -> Step | None:
        """Close a model step with its usage, priced; None when no step is open under `key`."""
        with self._lock:
            step = self._by_key.pop(key, None)
        if step is None:
            return None
        step.ended_at = time.time()
        step.name = name or step.name
        step.input_tokens = input_tokens
        step.output_tokens = output_tokens
        step.cost = call_cost(provider_price(step.name, self.config), input_tokens, output_tokens)
        if text:
            step.result = text
        step.metadata.update((k, v) for k, v in metadata.items() if v not in (None, [], {}))
        return step

    def model_failed(self, key: Any, error: str) -> None:
        """Close a model step whose call raised."""
        with self._lock:
            step = self._by_key.pop(key, None)
        if step is not None:
            step.ended_at = time.time()
            step.error = error

    def tool_started(
        self, key: Any, name: str, arguments: Any, call_id: str | None = None, **metadata: Any
    ) -> Step:
        """Open a tool step for a call about to run (`call_id` defaults to the key)."""
        if call_id is None and key is not None:
            call_id = str(key)
        step = Step(
            kind="tool",
            name=name,
            arguments=arguments_dict(arguments),
            started_at=time.time(),
            call_id=call_id,
            metadata={k: v for k, v in metadata.items() if v is not None},
        )
        with self._lock:
            self.steps.append(step)
            if key is not None:
                self._by_key[("tool", key)] = step
        return step

    def tool_ended(self, key: Any, result: Any = None, error: str | None = None) -> None:
        """Close a tool step with its result or its error."""
        with self._lock:
            step = self._by_key.get(("tool", key))
        if step is None:
            return
        step.ended_at = time.time()
        if error is not None:
            step.error = error
        elif step.error is None:
            step.result = read_value(jsonable(result))

    def tool_failed(self, key: Any, error: str) -> None:
        """Mark a tool step as failed (before or after its end callback)."""
        with self._lock:
            step = self._by_key.get(("tool", key))
        if step is not None:
            step.error = error
            step.result = None

    def add(self, step: Step) -> None:
        """Append a step built elsewhere (handoffs, approvals, a framework's own record)."""
        with self._lock:
            self.steps.append(step)

    def fail_open(self, error: str) -> None:
        """Mark every model or tool step still open as failed with `error`."""
        with self._lock:
            open_steps = list(self._by_key.values())
            self._by_key.clear()
        for step in open_steps:
            if step.ended_at is None:
                step.ended_at = time.time()
                step.error = step.error or error

    def response(self, outcome: Outcome, started: float) -> AgentResponse:
        """The harness's response: output, usage and cost summed over model steps."""
        models = [s for s in self.steps if s.kind == "model"]
        usage = {"numRequests": len(models)}
        if any(s.input_tokens is not None or s.output_tokens is not None for s in models):
            prompt = sum(s.input_tokens or 0 for s in models)
            completion = sum(s.output_tokens or 0 for s in models)
            usage |= {"prompt": prompt, "completion": completion, "total": prompt + completion}
        costs = [s.cost for s in models]
        known = bool(models) and None not in costs
        return AgentResponse(
            output=jsonable(outcome.output),
            error=outcome.error,
            token_usage=usage,
            cost=sum(c for c in costs if c is not None) if known else None,
            metadata=outcome.metadata,
            trajectory=list(self.steps),
            stop_reason=outcome.stop_reason,
            finish_reason=outcome.finish_reason,
            latency_ms=(time.time() - started) * 1000.0,
        )


def error_text(exc: BaseException) -> str:
    """`Type: message` of an exception, as error rows quote it."""
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


class FrameworkAgent(ABC):
    """One framework agent object behind the harness's Agent interface.

    Subclasses say which objects they accept and run one prompt through the framework,
    recording steps on the Recorder and returning an Outcome. Framework exceptions they do
    not map become an error response that keeps the steps recorded so far (stop reason
    `error`); the run's context is current while the framework runs (`current_run`).
    """

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        self.label = spec.label
        self.config = dict(spec.config)
        self.target = load_framework_object(spec, root, self.accepts)

    @staticmethod
    @abstractmethod
    def accepts(value: Any) -> bool:
        """True when `value` is an agent object this framework runs."""

    @abstractmethod
    async def run(self, prompt: str, context: CallContext, recorder: Recorder) -> Outcome:
        """Run the agent once on `prompt`, recording its model and tool calls."""

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Run the agent; its failures become error responses with the partial trajectory."""
        recorder = Recorder(self.config)
        started = time.time()
        with serving(context):
            try:
                outcome = await self.run(prompt, context, recorder)
            except ChatPromptError as exc:
                outcome = Outcome(stop_reason=STOP_ERROR, error=str(exc))
            except Exception as exc:
                outcome = Outcome(stop_reason=STOP_ERROR, error=error_text(exc))
        if outcome.error is not None:
            recorder.fail_open(outcome.error)
        return recorder.response(outcome, started)

    async def aclose(self) -> None:  # noqa: B027 - a concrete no-op, not an abstract hook
        """Nothing to release: the agent object belongs to the user's module."""
