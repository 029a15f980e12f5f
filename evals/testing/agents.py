"""The agents of a pytest session: named on the command line or in the suite file, built on
first use, and called on one event loop of their own, as `evals run`'s runner calls them.

An agent is a provider id (`file://agent.py:fn`, `openai:gpt-4o-mini`, `exec:...`, any
kind `evals run` accepts), an import path (`package.module:function`, a function with
promptfoo's `(prompt, options, context)` contract), or the label of a provider of the
suite file. Whatever the agent does wrong (raises, times out, returns garbage or an
error) comes back as `AgentCallError`, which the plugin stores as an error row.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import threading
import time
import traceback
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from evals.agents.base import Agent
from evals.agents.validate import MalformedResponse
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse, ErrorKind
from evals.model.suite import ProviderSpec
from evals.testing.results import AgentResult
from evals.testing.runs import EvalsRun

if TYPE_CHECKING:
    from evals.agents.simulated_user import UserSimulation

T = TypeVar("T")
_IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
_FILE_PREFIXES = ("file://", "python:")


class AgentCallError(Exception):
    """The agent gave no gradable answer; `kind` is the error row's kind."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


def is_import_path(text: str) -> bool:
    """True for `package.module:function` (and not a provider id such as `openai:gpt-4o`)."""
    from evals.agents.registry import is_provider_id

    return not is_provider_id(text) and _IMPORT_PATH.fullmatch(text) is not None


def import_function(path: str) -> Any:
    """The function an import path names; a SuiteError saying what is missing otherwise."""
    module_name, _, attribute = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise SuiteError(
            f"cannot import the agent {path!r}: {type(exc).__name__}: {exc}",
            fix="name an importable module (is its folder on sys.path?) and a function in it",
        ) from None
    for part in attribute.split("."):
        target = getattr(target, part, None)
    if not callable(target):
        raise SuiteError(
            f"the agent {path!r} is not a function",
            fix=f"define {attribute}(prompt, options, context) in {module_name}",
        )
    return target


def resolve_agent(
    value: str, role: str, providers: Sequence[ProviderSpec], base: Path
) -> ProviderSpec:
    """The agent `value` names for `role` (baseline, candidate): a provider of the suite
    file by label, else a provider id or an import path, labelled by the role.

    Relative `file://` paths are taken from `base` (where pytest was started).
    """
    for spec in providers:
        if spec.label == value:
            return spec
    from evals.agents.registry import is_provider_id

    if is_provider_id(value):
        for prefix in _FILE_PREFIXES:
            if value.startswith(prefix):
                path, sep, function = value[len(prefix) :].partition(".py:")
                absolute = (base / (path + ".py" if sep else path)).resolve()
                value = f"file://{absolute}" + (f":{function}" if sep else "")
        return ProviderSpec(id=value, label=role)
    if is_import_path(value):
        return ProviderSpec(id=value, label=role)
    labels = ", ".join(p.label for p in providers) or "none"
    raise SuiteError(
        f"--evals-{role} {value!r} is not an agent",
        fix="name a provider id (file://agent.py:fn, openai:gpt-4o-mini, ...), an import "
        f"path (package.module:function) or a provider label of the suite file ({labels})",
    )


def simulated_user(config: dict[str, Any], label: str) -> tuple[ProviderSpec, UserSimulation]:
    """A simulated user's provider entry around agent `label` and its parsed config; a
    SuiteError saying what to fix when the config is wrong."""
    from evals.agents.simulated_user import PROVIDER_ID, parse_simulation

    spec = ProviderSpec(id=PROVIDER_ID, label=label, config=dict(config))
    return spec, parse_simulation(spec)


class _Files:
    """Where `check_provider` looks for the files a provider id names."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def file_ref(self, ref: str, node: Any, what: str) -> Path:
        """The file a `file://` reference names; a SuiteError when it does not exist."""
        from evals.common.files import split_ref

        path = (self.root / split_ref(ref)[0]).resolve()
        if not path.exists():
            raise SuiteError(f"{what} file not found: {path}", fix="correct the path")
        return path


def check_agent(spec: ProviderSpec, root: Path) -> None:
    """Reject an agent that cannot be built (missing file, unknown kind, failed import)."""
    if is_import_path(spec.id):
        import_function(spec.id)
        return
    from evals.agents.registry import check_provider

    check_provider(spec, _Files(root))


def build(spec: ProviderSpec, root: Path) -> Agent:
    """The agent of a provider spec or an import path."""
    if is_import_path(spec.id):
        from evals.agents.python_provider import PythonAgent

        return PythonAgent(spec, root, function=import_function(spec.id))
    from evals.agents.registry import build_agent

    return build_agent(spec, root)


class AgentPool:
    """The session's agents by label, each built on first use, all called on one loop.

    The loop runs on a thread of its own, so a test (sync, or async on a loop of its
    own) calls an agent by waiting for it, and agents that keep clients or worker threads
    between calls (the Python provider's thread pool) keep them for the whole session.
    """

    def __init__(
        self,
        specs: Sequence[ProviderSpec],
        root: Path,
        timeout_s: float | None = None,
        conversation: dict[str, Any] | None = None,
    ) -> None:
        """`conversation` is the suite file's simulated user (`defaultTest.provider`'s
        `promptfoo:simulated-user` config): with it, every call is a conversation."""
        self.specs = {spec.label: spec for spec in specs}
        self.root = root
        self.timeout_s = timeout_s
        self.conversation = conversation
        self._agents: dict[str, Agent] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def ask(
        self,
        run: EvalsRun,
        prompt: str,
        variables: dict[str, Any] | None = None,
        conversation: dict[str, Any] | None = None,
    ) -> AgentResult:
        """Call the run's agent once with `prompt`, record the answer on the run, return it.

        With `conversation` (a simulated user's config, promptfoo's keys), or the suite
        file's simulated user, the call is a whole conversation between that user and the
        run's agent, `prompt` the agent's system prompt, as `evals run` holds it: the answer
        is the transcript, its trajectory every turn of both sides.
        Raises AgentCallError when the agent gives no gradable answer (the answer is
        still recorded when there is one, e.g. an error the agent reported).
        """
        spec = self.specs.get(run.agent)
        if spec is None:
            raise AgentCallError("infra", f"no agent is configured for {run.agent!r}")
        context = run.call_context(prompt, variables)
        context.timeout_s = self.timeout_s
        talk = conversation if conversation is not None else self.conversation
        if talk is None:
            response = self._wait(self._call(spec, prompt, context))
        else:
            response = self._wait(self._converse(spec, talk, prompt, context))
        result = run.record(AgentResult(response, prompt, dict(variables or {})))
        if response.error is not None:
            raise AgentCallError("agent_error", response.error)
        if spec.transform:
            response.output = self._transformed(spec, response.output, prompt, variables)
        return result

    def close(self) -> None:
        """Release every agent built (clients, processes, threads) and stop the loop."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        for agent in self._agents.values():
            try:
                self._wait(agent.aclose())
            except Exception:  # a failing close must not hide the evaluation's verdict
                traceback.print_exc()
        self._agents.clear()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        self._loop = self._thread = None

    def _wait(self, coroutine: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name="evals-agents", daemon=True
                )
                self._thread.start()
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _built(self, key: str, spec: ProviderSpec) -> Agent:
        agent = self._agents.get(key)
        if agent is None:
            try:
                agent = self._agents[key] = build(spec, self.root)
            except Exception as exc:
                raise AgentCallError(
                    "infra", f"building agent {spec.label!r} failed: {exc}"
                ) from None
        return agent

    async def _converse(
        self, spec: ProviderSpec, config: dict[str, Any], prompt: str, context: Any
    ) -> AgentResponse:
        """A simulated user's conversation with the agent of `spec`, as one call."""
        from evals.agents.registry import build_conversation

        simulation_spec, simulation = simulated_user(config, spec.label)
        target = self._built(spec.label, spec)
        user = None
        if simulation.user is not None:
            user = self._built(f"user {json.dumps(config, sort_keys=True)}", simulation.user)
        agent = build_conversation(simulation_spec, self.root, target, user, simulation.user)
        return await self._call(spec, prompt, context, agent)

    async def _call(
        self, spec: ProviderSpec, prompt: str, context: Any, agent: Agent | None = None
    ) -> AgentResponse:
        agent = agent or self._built(spec.label, spec)
        started = time.perf_counter()
        try:
            call = agent.call(prompt, context)
            response = await (asyncio.wait_for(call, self.timeout_s) if self.timeout_s else call)
        except TimeoutError:
            raise AgentCallError("timeout", f"agent timed out after {self.timeout_s:g} s") from None
        except MalformedResponse as exc:
            raise AgentCallError("malformed", f"malformed agent response: {exc}") from None
        except Exception as exc:
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            raise AgentCallError("agent_error", f"agent raised {detail}") from None
        if response.latency_ms is None:
            response.latency_ms = (time.perf_counter() - started) * 1000.0
        return response

    def _transformed(
        self, spec: ProviderSpec, output: Any, prompt: str, variables: dict[str, Any] | None
    ) -> Any:
        from evals.common.transforms import apply_output_transform

        context = {"vars": dict(variables or {}), "prompt": {"raw": prompt, "label": prompt}}
        try:
            return apply_output_transform(
                str(spec.transform), output, context, self.root, "provider transform"
            )
        except Exception as exc:
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            raise AgentCallError("agent_error", f"transform raised {detail}") from None


class AgentCaller:
    """The `evals_agent` fixture: calls the run's agent, as `evals run` would, and records
    each answer on the run."""

    def __init__(self, pool: AgentPool, run: EvalsRun) -> None:
        self.pool = pool
        self.run = run

    @property
    def label(self) -> str:
        """The label of the agent this run calls (baseline, candidate, ...)."""
        return self.run.agent

    def __call__(self, prompt: str, vars: dict[str, Any] | None = None) -> AgentResult:
        """Send `prompt` (with `vars`, which the agent sees in its context) and return
        the answer; raises AgentCallError when there is no gradable answer. With a
        simulated user in the suite file (`defaultTest.provider`), the call is a
        conversation (see `converse`)."""
        return self.pool.ask(self.run, prompt, vars)

    def converse(
        self, prompt: str, vars: dict[str, Any] | None = None, **config: Any
    ) -> AgentResult:
        """Hold a conversation between a simulated user and the run's agent, as `evals run`
        holds one for a test whose provider is `promptfoo:simulated-user`, and return it as
        one answer: the transcript as output, every turn of both sides in the trajectory
        (each step with its turn), so the checks judge the whole conversation.

        `prompt` is the agent's system prompt; `vars` the test's vars (the user's
        `instructions`, a scripted user's lines); `config` the simulated user's config with
        promptfoo's keys (`provider`, `maxTurns`, `instructions`, `stopSignal`,
        `handoffTools`, `initialMessages`, `stateful`, `userPrompt`), over the suite file's
        simulated user when it has one. A bad config fails the test with what to fix."""
        base = self.pool.conversation or {}
        return self.pool.ask(self.run, prompt, vars, {**base, **config})
