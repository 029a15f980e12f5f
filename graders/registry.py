"""The table from assertion type to grader function, and type validation for suites."""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from typing import Any

from evals.common import plugins
from evals.common.files import is_file_ref
from evals.graders import catalog
from evals.graders.base import GradeContext, GraderError
from evals.graders.catalog import LAYERS, AssertionType, Layer
from evals.model.errors import SuiteError
from evals.model.results import Grade

# A grader is a plain function; graders that call out (LLM judges) are coroutine functions.
Grader = Callable[[GradeContext], Grade | Awaitable[Grade]]
ValueCheck = Callable[[Any], None]
_GRADERS: dict[str, Grader] = {}
_VALUE_CHECKS: dict[str, ValueCheck] = {}
_DECLARED: dict[str, AssertionType] = {}
_loaded = False

GROUP_TYPES = frozenset({"select-best", "max-score"})
"""Assertion types that grade the outputs of one test and repeat together."""

COMBINATORS = frozenset({"and", "or"})
"""Assertion types of later promptfoo versions that promptfoo 0.121 runs as error rows."""

COMBINATOR_HINT = (
    "the `and` / `or` combinators are not part of promptfoo 0.121, which turns every row "
    "using them into an 'Unknown assertion type' error row, and so does evals; write `and` "
    "as `type: assert-set` (it passes when all its assertions pass) and `or` as one "
    "assertion that accepts each alternative (`contains-any`, a regex with `|`, `javascript`)"
)

NEGATED_GROUP_HINT = (
    "select-best and max-score pick one winner among the outputs of a test and have no "
    "`not-` form; write the assertion without `not-`"
)


def register(*names: str, layer: Layer, promptfoo: bool = False) -> Callable[[Grader], Grader]:
    """Decorator: make a grader available under one or more assertion types.

    `layer` is the scorecard layer its scores count in (`final`: the answer; `trajectory`:
    the tools called; `policy`; `operational`: cost, latency, steps; `trace`), `promptfoo`
    whether the types are promptfoo's own (a promptfoo CSV's `__expected` cell may name
    them). The harness finds its own graders' declarations without importing them
    (`evals.graders.catalog`), so the arguments are literals; a plugin's are read when its
    entry point loads.
    """
    if layer not in LAYERS:
        raise ValueError(f"unknown scorecard layer {layer!r}; layers: {', '.join(LAYERS)}")

    def wrap(fn: Grader) -> Grader:
        for name in names:
            _GRADERS[name] = fn
            _DECLARED[name] = AssertionType(name, fn.__module__, layer, promptfoo)
        return fn

    return wrap


def value_check(*names: str) -> Callable[[ValueCheck], ValueCheck]:
    """Decorator: a load-time check of an assertion value; it raises GraderError when invalid."""

    def wrap(fn: ValueCheck) -> ValueCheck:
        for name in names:
            _VALUE_CHECKS[name] = fn
        return fn

    return wrap


def _load() -> None:
    """Import every grader module of the harness."""
    global _loaded
    if _loaded:
        return
    for module in catalog.modules():
        _import(module)
    _loaded = True


def _import(module: str) -> None:
    import importlib

    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise


def _load_type(kind: str) -> None:
    """Make `kind` available: import the harness's module that declares it, else an
    installed plugin's entry point for it, else every module of the harness (for a type
    declared in a way the catalog cannot read)."""
    if kind in _GRADERS or kind in _VALUE_CHECKS:
        return
    module = catalog.module_of(kind)
    if module is not None:
        _import(module)
        return
    _load_plugin(kind)
    if kind not in _GRADERS:
        _load()


def _load_plugin(kind: str) -> None:
    """Import the installed plugin that names `kind` in the entry-point group
    `evals.assertions`; its grader must register the type."""
    plugin = plugins.find(plugins.ASSERTIONS, kind)
    if plugin is None:
        return
    grader = plugins.load(plugin)
    if _GRADERS.get(kind) is not grader:
        raise plugins.wrong_kind(
            plugin, f"a grader registered as {kind!r} (decorated with @register({kind!r}, ...))"
        )


def declaration(kind: str) -> AssertionType | None:
    """How the grader of an assertion type (without `not-`) declared it, None for a type
    with no grader."""
    declared = catalog.declared().get(kind)
    if declared is None:
        _load_type(kind)
        declared = _DECLARED.get(kind)
    return declared


def get_grader(kind: str) -> Grader | None:
    """The grader registered for an assertion type (without `not-`), or None."""
    grader = _GRADERS.get(kind)
    if grader is None:
        _load_type(kind)
        grader = _GRADERS.get(kind)
    return grader


def known_types() -> list[str]:
    """Every assertion type the harness and its installed plugins grade, sorted (the
    plugins' entry points are not imported)."""
    _load()
    return sorted({*_GRADERS, *plugins.names(plugins.ASSERTIONS)})


def check_assertion_type(kind: str, file: str | None = None, line: int | None = None) -> None:
    """Raise a SuiteError with a suggestion when `kind` is not a known assertion type.

    `and` / `or` pass: promptfoo 0.121 runs them as error rows, and so do the graders
    (`evals validate` warns of them).
    """
    hint = unknown_type_hint(kind, file, line)
    if hint is not None:
        raise SuiteError(f"unknown assertion type {kind!r}", file, line, hint)


def unknown_type_hint(kind: str, file: str | None = None, line: int | None = None) -> str | None:
    """None for a known assertion type (and `and` / `or`), else the suggestion for it (the
    closest known type). A `not-` form of a group assertion is a SuiteError: it has none."""
    base = kind[4:] if kind.startswith("not-") else kind
    if base in GROUP_TYPES:
        if base != kind:
            raise SuiteError(f"unsupported assertion type {kind!r}", file, line, NEGATED_GROUP_HINT)
        return None
    if base in COMBINATORS or get_grader(base) is not None:
        return None
    close = difflib.get_close_matches(base, known_types(), n=1)
    return f"did you mean {close[0]!r}?" if close else "see docs/graders.md for the list"


def check_assertion_value(
    kind: str, value: Any, file: str | None = None, line: int | None = None
) -> None:
    """Raise a SuiteError when a literal assertion value can never be graded (bad regex, schema).

    Values that use templates or `file://` are checked when graded, since they are only known
    then.
    """
    base = kind[4:] if kind.startswith("not-") else kind
    _load_type(base)
    check = _VALUE_CHECKS.get(base)
    if check is None or _is_deferred(value):
        return
    try:
        check(value)
    except GraderError as exc:
        raise SuiteError(f"invalid value for {kind!r} assertion: {exc}", file, line) from None


def _is_deferred(value: Any) -> bool:
    if isinstance(value, str):
        return is_file_ref(value) or "{{" in value or "{%" in value
    if isinstance(value, list):
        return any(_is_deferred(v) for v in value)
    if isinstance(value, dict):
        return any(_is_deferred(v) for v in value.values())
    return False
