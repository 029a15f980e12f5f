"""From a provider id to an agent: validation at load time, construction at run time."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from evals.agents.base import Agent
from evals.common import plugins
from evals.common.files import FILE_PREFIX, split_ref
from evals.common.jsfiles import JS_FILES
from evals.model.errors import SuiteError
from evals.model.suite import ProviderSpec


class ProviderLoadError(SuiteError):
    """A Python provider whose file is missing, fails to import or lacks its function.

    promptfoo loads such a config and errors every row of the provider; a suite loader
    may do the same (the agent then answers each call with the error), while callers that
    build one agent on purpose refuse it."""


class _FileChecker(Protocol):
    root: Path

    def file_ref(self, ref: str, node: Any, what: str) -> Path: ...


def _kind(provider_id: str) -> str | None:
    if provider_id in _KINDS:
        return provider_id
    for prefix in _KINDS:
        if prefix.endswith((":", "//")) and provider_id.startswith(prefix):
            return prefix
    return None


def _is_javascript(provider_id: str) -> bool:
    """Whether a `file://` provider names a JavaScript file (a `:function` part aside,
    which such a provider cannot have): promptfoo builds its exported class."""
    return split_ref(provider_id)[0].lower().endswith(JS_FILES)


def _plugin(provider_id: str) -> plugins.Plugin | None:
    """The installed plugin whose scheme starts `provider_id` (`acme` for `acme` and
    `acme:model-2`), None when none does."""
    scheme = provider_id.split(":", 1)[0]
    return plugins.find(plugins.AGENTS, scheme) if scheme else None


def _plugin_class(plugin: plugins.Plugin) -> Any:
    """The agent class a plugin's entry point holds (built as `cls(spec, root)`)."""
    cls = plugins.load(plugin)
    if not isinstance(cls, type):
        raise plugins.wrong_kind(plugin, "an agent class, built as cls(spec, root)")
    return cls


def is_provider_id(text: str) -> bool:
    """True when `text` names a provider kind (`file://x.py`, `openai:gpt-4o`, `echo`, an
    installed plugin's scheme, ...)."""
    return _kind(text) is not None or _plugin(text) is not None


def check_provider(spec: ProviderSpec, loader: _FileChecker) -> None:
    """Reject unknown provider ids and missing provider files before any run; a plugin's
    agent class is imported and its `check(spec, root)`, when it has one, checks the
    provider's config."""
    kind = _kind(spec.id)
    if kind is None:
        plugin = _plugin(spec.id)
        if plugin is None:
            raise SuiteError(
                f"unknown provider id {spec.id!r}", file=None, line=spec.line, fix=_hint(spec.id)
            )
        check = getattr(_plugin_class(plugin), "check", None)
        if callable(check):
            plugins.guarded(plugin, check, "checking its provider's config")(spec, loader.root)
        return
    if kind == FILE_PREFIX and _is_javascript(spec.id):
        _check_javascript(spec, loader)
        return
    module_name = _KINDS[kind].agent.split(":")[0]
    if importlib.util.find_spec(module_name) is None:
        raise SuiteError(
            f"provider kind {kind!r} is not available in this installation", line=spec.line
        )
    if kind in (FILE_PREFIX, "python:"):
        rel, _ = split_ref(spec.id)
        if not rel.endswith(".py"):
            raise SuiteError(
                f"provider {spec.id!r} is not a Python file",
                line=spec.line,
                fix="point file:// at a .py file (optionally with :function)",
            )
        try:
            path = loader.file_ref(rel, None, f"provider {spec.label!r}")
        except SuiteError as exc:
            raise ProviderLoadError(exc.message, exc.file, exc.line, exc.fix) from None
        _import_agent(spec, path)
    check = _KINDS[kind].check
    if check is not None:
        check(spec, loader)


def _check_javascript(spec: ProviderSpec, loader: _FileChecker) -> None:
    """A JavaScript provider file: found, loaded and its class built before any run (as
    promptfoo does, which stops when that fails); one without `callApi` errs on each run."""
    from evals.agents.js_provider import name_javascript_provider

    path = loader.file_ref(split_ref(spec.id)[0], None, f"provider {spec.label!r}")
    if not name_javascript_provider(spec, path).has_call_api:
        raise ProviderLoadError(
            f"provider {spec.label!r} ({path.name}) has no callApi method",
            line=spec.line,
            fix="add async callApi(prompt, context, options) returning {output: ...}",
        )


def _hint(provider_id: str) -> str:
    """A close provider kind, else every kind: the table's, then installed plugins'."""
    installed = [f"{scheme}:" for scheme in plugins.names(plugins.AGENTS)]
    close = difflib.get_close_matches(provider_id, [*_KINDS, *installed], n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    kinds = [f"{kind}agent.py" if kind == FILE_PREFIX else kind for kind in _KINDS]
    return f"use one of {', '.join(kinds)}" + "".join(
        f", {scheme} (installed plugin)" for scheme in installed
    )


def check_grader(provider_id: str, root: Path) -> None:
    """`--grader ID`: refuse an unknown provider id, a kind this installation lacks, or a
    Python file that does not exist (relative to the suite's folder `root`), before any run
    rather than in every graded run."""
    kind = _kind(provider_id)
    if kind is None:
        plugin = _plugin(provider_id)
        if plugin is None:
            raise SuiteError(
                f"--grader {provider_id!r} is not a provider id", fix=_hint(provider_id)
            )
        _plugin_class(plugin)
        return
    module_name = _KINDS[kind].agent.split(":")[0]
    if importlib.util.find_spec(module_name) is None:
        raise SuiteError(
            f"--grader {provider_id!r}: provider kind {kind!r} is not available in this "
            "installation",
            fix="install the extra that provides it, or choose another grader",
        )
    if kind in (FILE_PREFIX, "python:"):
        rel, _ = split_ref(provider_id)
        target = (root / rel).resolve()
        if not target.is_file():
            raise SuiteError(
                f"--grader {provider_id!r}: file {rel} not found",
                fix=f"create {target} or correct the path (relative to {root})",
            )


def _import_agent(spec: ProviderSpec, path: Path) -> None:
    """Import an in-process Python agent and find its function while the suite loads, so
    a missing function or an import that fails (or calls `sys.exit`) is exit 2 before
    anything is stored. A worker agent is imported in its own process, at its first call.
    """
    from evals.agents.worker_client import wants_worker
    from evals.common.files import load_function

    if wants_worker(spec.config):
        return
    fn_name = split_ref(spec.id)[1] or "call_api"
    try:
        load_function(path, fn_name, "provider", "prompt, options, context")
    except SuiteError as exc:
        raise ProviderLoadError(
            f"provider {spec.label!r} ({path.name}): {exc.message}", line=spec.line, fix=exc.fix
        ) from None


def _check_http(spec: ProviderSpec, loader: _FileChecker) -> None:
    from evals.agents.http_provider import check_http_config

    check_http_config(spec, loader.root)


def _check_exec(spec: ProviderSpec, loader: _FileChecker) -> None:
    from evals.agents.exec_provider import check_exec_provider

    check_exec_provider(spec, loader.root)


def _check_sdk(spec: ProviderSpec, loader: _FileChecker) -> None:
    from evals.agents.sdk_providers import check_sdk_provider

    check_sdk_provider(spec)
    _check_prices(spec)


def _check_framework(spec: ProviderSpec, loader: _FileChecker) -> None:
    from evals.agents.frameworks.common import check_framework_provider

    check_framework_provider(spec, loader.root)
    _check_prices(spec)


def _check_script(spec: ProviderSpec, loader: _FileChecker) -> None:
    from evals.agents.scripted_user import parse_script

    parse_script(spec)


def _check_simulated_user(spec: ProviderSpec, loader: _FileChecker) -> None:
    """A simulated user's config, its `initialMessages` file and the provider playing the
    user (itself checked as any provider, and not another simulated user)."""
    from evals.agents.simulated_user import parse_simulation
    from evals.common.files import is_file_ref

    simulation = parse_simulation(spec)
    if is_file_ref(simulation.initial_messages):
        loader.file_ref(simulation.initial_messages, None, "initialMessages")
    user = simulation.user
    if user is None:
        return
    if _kind(user.id) == "promptfoo:simulated-user":
        raise SuiteError(
            "a simulated user cannot be played by another simulated user",
            line=spec.line,
            fix="give config.provider a model, evals:scripted-user or a Python function",
        )
    check_provider(user, loader)


def _check_prices(spec: ProviderSpec) -> None:
    """Prices in a model provider's config (`price`, `cost`, `inputCost`, `outputCost`)."""
    from evals.vendors.prices import PriceError, provider_price

    try:
        provider_price("", spec.config)
    except PriceError as exc:
        raise SuiteError(
            f"provider {spec.label!r}: {exc}",
            line=spec.line,
            fix="write inputCost and outputCost per token, or price: "
            "{input_per_mtok: 2.5, output_per_mtok: 10}",
        ) from None


@dataclass(frozen=True, slots=True)
class _Kind:
    """A provider kind: the agent class it builds (`module:Class`) and the check of a
    provider's config that runs while the suite loads, so a broken config is exit 2 with
    its fix before any run."""

    agent: str
    check: Callable[[ProviderSpec, _FileChecker], None] | None = None


# Provider id -> kind; a prefix ending in ':' or '//' matches ids that start with it.
_KINDS: dict[str, _Kind] = {
    "echo": _Kind("evals.agents.python_provider:EchoAgent"),
    "python:": _Kind("evals.agents.python_provider:PythonAgent"),
    FILE_PREFIX: _Kind("evals.agents.python_provider:PythonAgent"),
    "exec:": _Kind("evals.agents.exec_provider:ExecAgent", _check_exec),
    "http:": _Kind("evals.agents.http_provider:HttpAgent", _check_http),
    "https:": _Kind("evals.agents.http_provider:HttpAgent", _check_http),
    "http": _Kind("evals.agents.http_provider:HttpAgent", _check_http),
    "https": _Kind("evals.agents.http_provider:HttpAgent", _check_http),
    "openai:": _Kind("evals.agents.sdk_providers:OpenAIAgent", _check_sdk),
    "anthropic:": _Kind("evals.agents.sdk_providers:AnthropicAgent", _check_sdk),
    "openai-agents:": _Kind(
        "evals.agents.frameworks.openai_agents:OpenAIAgentsAgent", _check_framework
    ),
    "langgraph:": _Kind("evals.agents.frameworks.langgraph:LangGraphAgent", _check_framework),
    "pydantic-ai:": _Kind("evals.agents.frameworks.pydantic_ai:PydanticAIAgent", _check_framework),
    "promptfoo:simulated-user": _Kind(
        "evals.agents.simulated_user:SimulatedUserAgent", _check_simulated_user
    ),
    "evals:scripted-user": _Kind("evals.agents.scripted_user:ScriptedUser", _check_script),
}


def build_agent(spec: ProviderSpec, root: Path) -> Agent:
    """Construct the agent for a validated provider spec (a simulated user, which holds a
    conversation with another agent, is built with `build_conversation`)."""
    kind = _kind(spec.id)
    if kind is None:
        plugin = _plugin(spec.id)
        if plugin is None:
            raise SuiteError(f"unknown provider id {spec.id!r}", line=spec.line)
        build = plugins.guarded(plugin, _plugin_class(plugin), "building its agent")
        return cast(Agent, build(spec, root))
    if kind == "promptfoo:simulated-user":
        raise SuiteError(
            "promptfoo:simulated-user is a test's provider: it talks to the agent under test",
            line=spec.line,
            fix="set it as tests[].provider or defaultTest.provider, and the agent in providers:",
        )
    if kind == FILE_PREFIX and _is_javascript(spec.id):
        from evals.agents.js_provider import JavaScriptAgent

        return JavaScriptAgent(spec, root)
    module_name, class_name = _KINDS[kind].agent.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(spec, root)


def build_conversation(
    spec: ProviderSpec,
    root: Path,
    target: Agent,
    user: Agent | None,
    user_spec: ProviderSpec | None,
) -> Agent:
    """A simulated user's conversation with `target` (the agent under test), the user played
    by `user`, built from `user_spec` (`config.provider`; None: promptfoo's hosted model)."""
    from evals.agents.simulated_user import SimulatedUserAgent

    return SimulatedUserAgent(spec, root, target, user, user_spec)
