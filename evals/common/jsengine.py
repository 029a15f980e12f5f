"""A sandboxed JavaScript engine for what promptfoo runs as JavaScript.

promptfoo evaluates regular expressions with JavaScript's `RegExp`, inline assertions and
transforms with `new Function`, and templates with Nunjucks. The harness runs the same
code in QuickJS (the `quickjs` module of the quickjs-ng package) with the Nunjucks 3.2.4
browser build bundled in `evals/common/js/`, so results are JavaScript's own.

The sandbox is made of realms: QuickJS contexts, each built from a few files of `js/`
(`REALMS`) and then locked down (`js/harden.js`): every object code in it can reach is
frozen, and the host's entry points are taken off its global object. Five realms serve
five kinds of work: `templates` (Nunjucks, whose global object is frozen too, so one
render cannot change what another sees), `scripts` (inline assertions, transforms and
JavaScript files' exported functions), `regex` (regular expressions, with a larger
memory limit), `modules` (ES modules parsed and rewritten as the scripts realm's
function bodies, created only when a suite has one) and `typescript` (TypeScript files
turned into JavaScript by the bundled sucrase, created only when a suite has one). A
realm has no access to Python, files, the network, the process or its environment, and
none is added; the only host function is the one that calls a suite's own Python
`nunjucksFilters` with JSON data, reachable only through those filters. Every call has
a time limit and the realm a memory limit; a call that exceeds one raises
`JavaScriptLimitError` and the realm is discarded, so the next call starts clean. Realms
are created lazily, one of each per thread (QuickJS contexts must stay on the thread that
made them); the templates realm is built again when the suite's filters change.

To add to the sandbox: a call is a function a realm's file puts in `__evalsBridge.calls`
(see `js/bridge.js`); `CALL_REALMS` says which realm answers it (`scripts` by default);
a realm is a `RealmSpec` in `REALMS`.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from evals.common import jsregex

DEFAULT_TIME_LIMIT_S = 5.0
"""Longest a single call (a render, a regex, an assertion, a transform) may run."""

MEMORY_LIMIT_BYTES = 64 * 1024 * 1024
"""Memory one realm may use, Nunjucks included (about 4 MB)."""

REGEX_MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
"""Memory the regex realm may use: a backtracking match of a long text keeps a long stack
(`^(ab)+$` over 2 MB of text needs about 70 MB)."""

MAX_OUTPUT_CHARS = 8 * 1024 * 1024
"""Longest text a template may render."""

_STACK_BYTES = 512 * 1024

RealmName = Literal["templates", "scripts", "regex", "modules", "typescript"]


@dataclass(frozen=True)
class RealmSpec:
    """A realm: the files of `js/` it loads in order, the global names the host takes as
    its entry points (they leave the global object at lockdown), whether its global object
    is frozen, and whether its memory limit is the regex one."""

    sources: tuple[str, ...]
    entries: tuple[str, ...]
    frozen_global: bool
    regex_memory: bool = False


REALMS: dict[RealmName, RealmSpec] = {
    "templates": RealmSpec(
        ("harden.js", "bridge.js", "nunjucks.min.js", "templates.js"),
        ("__evals", "__evalsBridge", "__render"),
        frozen_global=True,
    ),
    "scripts": RealmSpec(
        ("harden.js", "bridge.js", "scripts.js"), ("__evals", "__evalsBridge"), frozen_global=False
    ),
    "regex": RealmSpec(
        ("harden.js", "bridge.js", "regex.js"),
        ("__evals", "__evalsBridge", "__regex"),
        frozen_global=True,
        regex_memory=True,
    ),
    "modules": RealmSpec(
        ("harden.js", "bridge.js", "acorn.js", "modules.js"),
        ("__evals", "__evalsBridge"),
        frozen_global=True,
    ),
    "typescript": RealmSpec(
        ("harden.js", "bridge.js", "sucrase.js", "typescript.js"),
        ("__evals", "__evalsBridge"),
        frozen_global=True,
    ),
}

CALL_REALMS: dict[str, RealmName] = {
    "render": "templates",
    "compile": "templates",
    "envNames": "templates",
    "regex": "regex",
    "moduleToCommonJs": "modules",
    "typescriptToJs": "typescript",
}
"""The realm that answers each call; any other call is the scripts realm's."""


class JavaScriptError(Exception):
    """JavaScript code threw: `name` is the error's class (SyntaxError, TypeError, ...)."""

    def __init__(self, message: str, name: str = "Error", stack: str = "", lineno: Any = None):
        super().__init__(message)
        self.message = message
        self.name = name
        self.stack = stack
        self.lineno = lineno if isinstance(lineno, int) else None

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


class JavaScriptLimitError(JavaScriptError):
    """A call ran out of time (`limit` "time") or memory ("memory"); its realm was discarded."""

    def __init__(self, message: str, limit: Literal["time", "memory"]) -> None:
        super().__init__(message, "InternalError")
        self.limit = limit


@dataclass
class _Limits:
    time_s: float = DEFAULT_TIME_LIMIT_S
    memory_bytes: int = MEMORY_LIMIT_BYTES
    regex_memory_bytes: int = REGEX_MEMORY_LIMIT_BYTES
    output_chars: int = MAX_OUTPUT_CHARS


_limits = _Limits()
_filters: dict[str, tuple[str, Any]] = {}
_filters_version = 0
_registry_lock = threading.Lock()
_local = threading.local()


def set_time_limit(seconds: float) -> None:
    """Limit every later call to `seconds` (a run's timeout may be shorter than the default)."""
    _limits.time_s = max(0.01, float(seconds))


def register_script_filter(name: str, source: str) -> None:
    """A Nunjucks filter from a JavaScript file (`module.exports = function ...`).

    Loaded at once to check it; JavaScriptError (and the filter left out) when it throws
    or exports no function.
    """
    _register(name, ("script", source))
    try:
        _realm("templates")
    except JavaScriptError:
        _unregister(name)
        raise


def register_host_filter(name: str, function: Callable[..., Any]) -> None:
    """A Nunjucks filter written in Python: called with JSON data, its result sent back as JSON."""
    _register(name, ("host", function))


def clear_filters() -> None:
    """Forget every registered filter: the next suite loaded in this process starts from
    Nunjucks's own (a suite's `reverse` filter must not replace the built-in for another)."""
    global _filters_version
    with _registry_lock:
        if _filters:
            _filters.clear()
            _filters_version += 1


def _register(name: str, entry: tuple[str, Any]) -> None:
    global _filters_version
    with _registry_lock:
        _filters[name] = entry
        _filters_version += 1


def _unregister(name: str) -> None:
    global _filters_version
    with _registry_lock:
        _filters.pop(name, None)
        _filters_version += 1


def _read(name: str) -> str:
    return resources.files("evals.common").joinpath("js", name).read_text(encoding="utf-8")


_SOURCES: dict[str, str] = {}


def _source(name: str) -> str:
    text = _SOURCES.get(name)
    if text is None:
        text = _SOURCES[name] = _read(name)
    return text


def _call_host_filter(name: str, args_json: str) -> str:
    entry = _filters.get(name)
    if entry is None or entry[0] != "host":
        raise ValueError(f"no Python filter named {name!r}")
    return json.dumps(entry[1](*json.loads(args_json)), ensure_ascii=False, default=str)


class _Realm:
    """One locked-down QuickJS context built from a `RealmSpec`."""

    def __init__(self, name: RealmName) -> None:
        import quickjs

        spec = REALMS[name]
        self.name = name
        self._quickjs = quickjs
        self.context = quickjs.Context()
        memory = _limits.regex_memory_bytes if spec.regex_memory else _limits.memory_bytes
        self.context.set_memory_limit(memory)
        self.context.set_max_stack_size(_STACK_BYTES)
        self.context.set_time_limit(-1)
        self.filters_version = -1
        with _registry_lock:
            filters, version = dict(_filters), _filters_version
        if name == "templates" and any(kind == "host" for kind, _ in filters.values()):
            self.context.add_callable("__host_filter", _call_host_filter)
        try:
            for source in spec.sources:
                self.context.eval(_source(source))
        except quickjs.JSException as exc:
            raise _thrown(str(exc)) from None
        self.dispatch = self.context.get("__evals")
        self.direct = {entry: self.context.get(entry) for entry in spec.entries}
        if name == "templates":
            self._add_filters(filters)
            self.filters_version = version
            self._dispatch("seal", [])
        frozen = "true" if spec.frozen_global else "false"
        self.context.eval(f"__evalsHarden.lockdown({json.dumps(spec.entries)}, {frozen})")
        self.time_s = -1.0
        self.output_chars = -1

    def _add_filters(self, filters: dict[str, tuple[str, Any]]) -> None:
        for filter_name, (kind, payload) in filters.items():
            if kind == "script":
                self._dispatch("addScriptFilter", [filter_name, payload])
            else:
                self._dispatch("addHostFilter", [filter_name])

    def _ready(self, time_limited: bool) -> None:
        wanted = _limits.time_s if time_limited else -1.0
        if self.time_s != wanted:
            self.context.set_time_limit(wanted)
            self.time_s = wanted
        if self.name == "templates" and self.output_chars != _limits.output_chars:
            self.output_chars = _limits.output_chars
            self._dispatch("setMaxOutput", [_limits.output_chars])

    def call(self, name: str, args: list[Any], time_limited: bool) -> Any:
        self._ready(time_limited)
        envelope = self._dispatch(name, args)
        if envelope.get("pending"):
            envelope = self._settle()
        return None if envelope.get("undef") else envelope.get("ok")

    def direct_call(self, name: str, args: list[Any], time_limited: bool) -> Any:
        """An entry point taking and returning strings (`__regex`, `__render`): no JSON
        envelope; errors surface as the exception QuickJS raises."""
        self._ready(time_limited)
        try:
            return self.direct[name](*args)
        except self._quickjs.JSException as exc:
            raise _thrown(str(exc), self.name) from None
        except self._quickjs.StackOverflow as exc:
            raise JavaScriptError(str(exc), "RangeError") from None

    def _dispatch(self, name: str, args: list[Any]) -> dict[str, Any]:
        special = False
        try:  # ASCII JSON: lone surrogates survive the crossing
            payload = json.dumps(args, default=str, allow_nan=False)
        except ValueError:
            payload, special = json.dumps(_finite(args), default=str), True
        try:
            envelope = _envelope(self.dispatch(name, payload, special))
        except self._quickjs.JSException as exc:
            raise _limit_error(str(exc), self.name) from None
        except self._quickjs.StackOverflow as exc:
            raise JavaScriptError(str(exc), "RangeError") from None
        if "error" in envelope:
            error = envelope["error"]
            if _is_limit(error):
                raise _limit_error(error, self.name)
            raise JavaScriptError(error, envelope["name"], envelope["stack"], envelope["lineno"])
        return envelope

    def _settle(self) -> dict[str, Any]:
        """Run the realm's jobs until the call's promise settles; in the scripts realm,
        when no job is left, its next timer (timers run on a virtual clock)."""
        deadline = time.monotonic() + _limits.time_s
        while True:
            while self.context.execute_pending_job():
                if time.monotonic() > deadline:
                    raise _limit_error("interrupted", self.name)
            if self.name != "scripts" or not self._dispatch("pending", []).get("ok"):
                break
            if not self._dispatch("timerStep", []).get("ok"):
                break
            if time.monotonic() > deadline:
                raise _limit_error("interrupted", self.name)
        return self._dispatch("settled", [])


def _thrown(text: str, realm: RealmName | None = None) -> JavaScriptError:
    """The error a JavaScript exception's text (`Name: message` then `    at ...` lines)
    describes; a limit error when QuickJS stopped the code."""
    lines = text.split("\n")
    cut = next((i for i, line in enumerate(lines) if line.startswith("    at ")), len(lines))
    head, stack = "\n".join(lines[:cut]), "\n".join(lines[cut:])
    name, sep, message = head.partition(": ")
    if not sep or " " in name.replace("Template render error", ""):
        name, message = "Error", head
    if _is_limit(message):
        return _limit_error(message, realm)
    return JavaScriptError(message, name, stack)


_LIMIT_MESSAGES = ("interrupted", "out of memory", "out of memory in regexp execution")


def _is_limit(message: str) -> bool:
    """Whether QuickJS stopped the code (time or memory), possibly inside a Nunjucks error."""
    return message in _LIMIT_MESSAGES or message.endswith(
        tuple(f"InternalError: {text}" for text in _LIMIT_MESSAGES)
    )


def _finite(value: Any) -> Any:
    """`value` with NaN and infinities as the tagged objects the bridge revives."""
    if isinstance(value, float) and not math.isfinite(value):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return {"\u0000number": text}
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """`value` as the JSON text the scripts realm reads back (`scriptContext`): ASCII, so
    lone surrogates survive, with NaN and infinities tagged. Written once, it can be passed
    to many calls."""
    try:
        return json.dumps(value, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), default=str)


_NUMBER_TAG = "\u0000number"


def _revive(tagged: dict[str, Any]) -> Any:
    """A tagged number (NaN, Infinity, -Infinity) as the float it stands for."""
    if len(tagged) == 1 and _NUMBER_TAG in tagged:
        return float(tagged[_NUMBER_TAG])
    return tagged


def _envelope(text: str) -> dict[str, Any]:
    """The bridge's answer, with the non-finite numbers it tagged as Python floats."""
    if "\\u0000number" not in text:
        return dict(json.loads(text))
    return dict(json.loads(text, object_hook=_revive))


def _limit_error(message: str, realm: RealmName | None) -> JavaScriptLimitError:
    """The error of a call QuickJS stopped; its realm is not reused."""
    realms: dict[RealmName, _Realm] = getattr(_local, "realms", {})
    if realm is not None:
        realms.pop(realm, None)
    if "interrupted" in message:
        return JavaScriptLimitError(
            f"JavaScript ran longer than {_limits.time_s:g} s and was stopped", "time"
        )
    memory = _limits.regex_memory_bytes if realm == "regex" else _limits.memory_bytes
    return JavaScriptLimitError(
        f"JavaScript used more than {memory // (1024 * 1024)} MB and was stopped", "memory"
    )


def _realm(name: RealmName) -> _Realm:
    realms: dict[RealmName, _Realm] | None = getattr(_local, "realms", None)
    if realms is None:
        realms = _local.realms = {}
    realm = realms.get(name)
    if realm is None or (name == "templates" and realm.filters_version != _filters_version):
        realms.pop(name, None)
        realm = realms[name] = _Realm(name)
    return realm


def call(name: str, *args: Any, time_limited: bool = True) -> Any:
    """Call a function of the sandbox (`regex`, `assertion`, `transform`, `render`,
    `compile`, `envNames`, ...), in the realm `CALL_REALMS` names.

    Arguments and the result cross as JSON. Raises JavaScriptError when the code throws
    and JavaScriptLimitError when it runs out of time or memory. QuickJS cannot call
    Python under a time limit, so a render that calls a suite's Python filter passes
    `time_limited=False` (the memory and output limits still hold).
    """
    return _realm(CALL_REALMS.get(name, "scripts")).call(name, list(args), time_limited)


def host_filter_names() -> frozenset[str]:
    """The names of the registered Python filters."""
    return frozenset(name for name, (kind, _) in _filters.items() if kind == "host")


def regex_test(pattern: str, text: str, flags: str = "") -> bool:
    """`new RegExp(pattern, flags).test(text)`; JavaScriptError (a SyntaxError) when invalid.

    Patterns whose meaning Python's `re` shares exactly are matched without the sandbox
    (`jsregex`); the rest, and invalid ones, go to JavaScript.
    """
    if not flags:
        answer = jsregex.search(pattern, text)
        if answer is not None:
            return answer
    try:
        return bool(_realm("regex").direct_call("__regex", [pattern, flags, text], True))
    except (SystemError, UnicodeEncodeError):  # lone surrogates: only JSON carries them
        return bool(call("regex", pattern, flags, text))


def env_names(source: str) -> tuple[str, ...] | None:
    """The names of `env` a template reads as `env.NAME` or `env["NAME"]`; None when it
    reads `env` otherwise (the whole object, a computed key). A template that does not
    parse reads none (rendering it reports the error)."""
    try:
        names = call("envNames", source)
    except JavaScriptError:
        return ()
    return None if names == ["*"] else tuple(str(name) for name in names)


def render(
    source: str,
    variables: dict[str, Any],
    env: dict[str, str] | None,
    time_limited: bool,
    filters: bool,
) -> str:
    """Render a Nunjucks template with `variables` (and `env` as a global when given);
    `filters`: with the registered nunjucksFilters."""
    special = False
    try:
        payload = json.dumps(variables, default=str, allow_nan=False)
    except ValueError:
        payload, special = json.dumps(_finite(variables), default=str), True
    scope = None if env is None else json.dumps(env)
    realm = _realm("templates")
    try:
        arguments = [source, payload, scope, special, filters]
        return str(realm.direct_call("__render", arguments, time_limited))
    except (SystemError, UnicodeEncodeError):  # lone surrogates: only JSON carries them
        text = call("render", source, variables, env, filters, time_limited=time_limited)
        return str(text)
