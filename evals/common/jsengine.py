"""A sandboxed JavaScript engine for what promptfoo runs as JavaScript.

promptfoo evaluates regular expressions with JavaScript's `RegExp`, inline assertions and
transforms with `new Function`, and templates with Nunjucks. The harness runs the same
code in QuickJS (the `quickjs` module of the quickjs-ng package) with the Nunjucks 3.2.4
browser build bundled in `evals/common/js/`, so results are JavaScript's own.

The sandbox: a QuickJS context has no access to Python, files, the network, the process
or its environment, and none is added; the only host function is the one that calls a
suite's own Python `nunjucksFilters` with JSON data. Every call has a time limit and the
context a memory limit; a call that exceeds one raises `JavaScriptLimitError` and the
context is discarded, so the next call starts clean. A context is created lazily, one per
thread (QuickJS contexts must stay on the thread that made them); Nunjucks is loaded into
it only when a template needs more than plain `{{ name }}` slots.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from evals.common import jsregex

DEFAULT_TIME_LIMIT_S = 5.0
"""Longest a single call (a render, a regex, an assertion, a transform) may run."""

MEMORY_LIMIT_BYTES = 64 * 1024 * 1024
"""Memory one context may use, Nunjucks included (about 4 MB)."""

MAX_OUTPUT_CHARS = 8 * 1024 * 1024
"""Longest text a template may render."""

_STACK_BYTES = 512 * 1024


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
    """A call ran out of time or memory; its context was discarded."""


@dataclass
class _Limits:
    time_s: float = DEFAULT_TIME_LIMIT_S
    memory_bytes: int = MEMORY_LIMIT_BYTES
    output_chars: int = MAX_OUTPUT_CHARS


_limits = _Limits()
_filters: dict[str, tuple[str, Any]] = {}
_filters_version = 0
_registry_lock = threading.Lock()
_local = threading.local()


def set_time_limit(seconds: float) -> None:
    """Limit every later call to `seconds` (a run's timeout may be shorter than the default)."""
    _limits.time_s = max(0.01, float(seconds))


def time_limit() -> float:
    """The time limit of each call, in seconds."""
    return _limits.time_s


def register_script_filter(name: str, source: str) -> None:
    """A Nunjucks filter from a JavaScript file (`module.exports = function ...`).

    Loaded at once to check it; JavaScriptError (and the filter left out) when it throws
    or exports no function.
    """
    _register(name, ("script", source))
    try:
        call("compile", "", nunjucks=True)
    except JavaScriptError:
        _unregister(name)
        _local.engine = None  # its Nunjucks environment may hold part of the filter set
        raise


def register_host_filter(name: str, function: Callable[..., Any]) -> None:
    """A Nunjucks filter written in Python: called with JSON data, its result sent back as JSON."""
    _register(name, ("host", function))


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


# Intrinsics frozen after loading, so code run in one call cannot change what later calls
# see (prototype pollution stays inside the call that attempted it).
_FREEZE = """
(function () {
  // Properties code commonly assigns on its own objects (err.name = ...) stay assignable
  // there: a frozen prototype would otherwise forbid it (JavaScript's "override mistake").
  function overridable(proto, key) {
    var d = Object.getOwnPropertyDescriptor(proto, key);
    if (!d || !("value" in d)) return;
    var value = d.value;
    Object.defineProperty(proto, key, {
      get: function () { return value; },
      set: function (v) {
        if (this === proto) throw new TypeError("'" + key + "' is read-only");
        Object.defineProperty(this, key,
          {value: v, writable: true, enumerable: true, configurable: true});
      },
      enumerable: d.enumerable, configurable: false
    });
  }
  var names = ["Object", "Function", "Array", "String", "Number", "Boolean", "Symbol",
    "RegExp", "Date", "Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError",
    "EvalError", "URIError", "InternalError", "AggregateError", "Map", "Set", "WeakMap",
    "WeakSet", "Promise", "BigInt", "ArrayBuffer", "DataView"];
  var keys = ["constructor", "name", "message", "toString", "valueOf", "toLocaleString",
    "hasOwnProperty"];
  for (var i = 0; i < names.length; i++) {
    var C = globalThis[names[i]];
    if (typeof C !== "function") continue;
    if (C === Function) {
      Object.freeze(C.prototype);
      continue;
    }
    for (var k = 0; k < keys.length; k++) overridable(C.prototype, keys[k]);
    Object.freeze(C.prototype);
    Object.freeze(C);
  }
  Object.freeze(JSON); Object.freeze(Math); Object.freeze(Reflect);
  Object.freeze(Object.getPrototypeOf(function* () {}));
  Object.freeze(Object.getPrototypeOf(async function () {}));
  if (typeof nunjucks === "object") {
    Object.keys(nunjucks).forEach(function (k) {
      var v = nunjucks[k];
      if (typeof v === "function" && v.prototype) Object.freeze(v.prototype);
    });
    Object.freeze(nunjucks);
  }
})();
"""


class _Engine:
    """One QuickJS context with the prelude (and, once needed, Nunjucks) loaded."""

    def __init__(self, with_nunjucks: bool) -> None:
        import quickjs

        self._quickjs = quickjs
        self.context = quickjs.Context()
        self.context.set_memory_limit(_limits.memory_bytes)
        self.context.set_max_stack_size(_STACK_BYTES)
        self.context.set_time_limit(-1)
        self.has_nunjucks = with_nunjucks
        self.filters_version = -1
        if with_nunjucks:
            self.context.eval(_source("nunjucks.min.js"))
        self.context.eval(_source("prelude.js"))
        self.context.eval(_FREEZE)
        self.dispatch = self.context.get("__evals")
        self.direct = {name: self.context.get(f"__{name}") for name in ("regex", "render")}
        self.time_s = -1.0
        self.output_chars = -1

    def _ready(self, time_limited: bool) -> None:
        wanted = _limits.time_s if time_limited else -1.0
        if self.time_s != wanted:
            self.context.set_time_limit(wanted)
            self.time_s = wanted
        if self.output_chars != _limits.output_chars and self.has_nunjucks:
            self.output_chars = _limits.output_chars
            self._dispatch("setMaxOutput", [_limits.output_chars])
        if self.has_nunjucks and self.filters_version != _filters_version:
            self._sync_filters()

    def call(self, name: str, args: list[Any], time_limited: bool) -> Any:
        self._ready(time_limited)
        envelope = self._dispatch(name, args)
        if envelope.get("pending"):
            envelope = self._settle()
        return None if envelope.get("undef") else envelope.get("ok")

    def direct_call(self, name: str, args: list[Any], time_limited: bool) -> Any:
        """`regex` or `render` with string arguments and result: no JSON envelope."""
        self._ready(time_limited)
        try:
            return self.direct[name](*args)
        except self._quickjs.JSException as exc:
            raise _thrown(str(exc)) from None
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
            raise _limit_error(str(exc)) from None
        except self._quickjs.StackOverflow as exc:
            raise JavaScriptError(str(exc), "RangeError") from None
        if "error" in envelope:
            error = envelope["error"]
            if _is_limit(error):
                raise _limit_error(error)
            raise JavaScriptError(error, envelope["name"], envelope["stack"], envelope["lineno"])
        return envelope

    def _settle(self) -> dict[str, Any]:
        deadline = time.monotonic() + _limits.time_s
        while self.context.execute_pending_job():
            if time.monotonic() > deadline:
                raise _limit_error("interrupted")
        return self._dispatch("settled", [])

    def _sync_filters(self) -> None:
        with _registry_lock:
            filters, version = dict(_filters), _filters_version
        if any(kind == "host" for kind, _ in filters.values()):
            self.context.add_callable("__host_filter", _call_host_filter)
        for name, (kind, payload) in filters.items():
            if kind == "script":
                self._dispatch("addScriptFilter", [name, payload])
            else:
                self._dispatch("addHostFilter", [name])
        self.filters_version = version


def _thrown(text: str) -> JavaScriptError:
    """The error a JavaScript exception's text (`Name: message` then `    at ...` lines)
    describes; a limit error when QuickJS stopped the code."""
    lines = text.split("\n")
    cut = next((i for i, line in enumerate(lines) if line.startswith("    at ")), len(lines))
    head, stack = "\n".join(lines[:cut]), "\n".join(lines[cut:])
    name, sep, message = head.partition(": ")
    if not sep or " " in name.replace("Template render error", ""):
        name, message = "Error", head
    if _is_limit(message):
        return _limit_error(message)
    return JavaScriptError(message, name, stack)


def _is_limit(message: str) -> bool:
    """Whether QuickJS stopped the code (time or memory), possibly inside a Nunjucks error."""
    return message in ("interrupted", "out of memory") or message.endswith(
        ("InternalError: out of memory", "InternalError: interrupted")
    )


def _finite(value: Any) -> Any:
    """`value` with NaN and infinities as the tagged objects the prelude revives."""
    if isinstance(value, float) and not math.isfinite(value):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return {"\u0000number": text}
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """`value` as the JSON text the prelude reads back (`scriptContext`): ASCII, so lone
    surrogates survive, with NaN and infinities tagged. Written once, it can be passed to
    many calls."""
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
    """The prelude's answer, with the non-finite numbers it tagged as Python floats."""
    if "\\u0000number" not in text:
        return dict(json.loads(text))
    return dict(json.loads(text, object_hook=_revive))


def _limit_error(message: str) -> JavaScriptLimitError:
    _local.engine = None  # an interrupted or exhausted context is not reused
    if message == "interrupted" or "interrupted" in message:
        return JavaScriptLimitError(
            f"JavaScript ran longer than {_limits.time_s:g} s and was stopped", "InternalError"
        )
    return JavaScriptLimitError(
        f"JavaScript used more than {_limits.memory_bytes // (1024 * 1024)} MB and was stopped",
        "InternalError",
    )


def _engine(with_nunjucks: bool) -> _Engine:
    engine: _Engine | None = getattr(_local, "engine", None)
    if engine is None or (with_nunjucks and not engine.has_nunjucks):
        engine = _Engine(with_nunjucks)
        _local.engine = engine
    return engine


def call(name: str, *args: Any, nunjucks: bool = False, time_limited: bool = True) -> Any:
    """Call a prelude function (`regex`, `assertion`, `transform`, `render`, `compile`).

    Arguments and the result cross as JSON. Raises JavaScriptError when the code throws
    and JavaScriptLimitError when it runs out of time or memory. QuickJS cannot call
    Python under a time limit, so a render that calls a suite's Python filter passes
    `time_limited=False` (the memory and output limits still hold).
    """
    return _engine(nunjucks).call(name, list(args), time_limited)


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
        return bool(_engine(False).direct_call("regex", [pattern, flags, text], True))
    except (SystemError, UnicodeEncodeError):  # lone surrogates: only JSON carries them
        return bool(call("regex", pattern, flags, text))


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
    engine = _engine(True)
    try:
        arguments = [source, payload, scope, special, filters]
        return str(engine.direct_call("render", arguments, time_limited))
    except (SystemError, UnicodeEncodeError):  # lone surrogates: only JSON carries them
        text = call(
            "render", source, variables, env, filters, nunjucks=True, time_limited=time_limited
        )
        return str(text)
