"""The table from assertion type to grader function, and type validation for suites."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from evals.errors import SuiteError
from evals.results import Grade
from graders.base import GradeContext

Grader = Callable[[GradeContext], Grade]
_GRADERS: dict[str, Grader] = {}
_MODULES = (
    "graders.output",
    "graders.structured",
    "graders.python_assert",
    "graders.trajectory",
    "graders.budget",
    "graders.verifier",
    "graders.policy",
)
_loaded = False

JAVASCRIPT_HINT = (
    "javascript assertions are not supported; write the same check as "
    "type: python with value: a Python expression over `output` and `context`, "
    "or file://check.py with get_assert(output, context)"
)


def register(*names: str) -> Callable[[Grader], Grader]:
    """Decorator: make a grader available under one or more assertion types."""

    def wrap(fn: Grader) -> Grader:
        for name in names:
            _GRADERS[name] = fn
        return fn

    return wrap


def _load() -> None:
    global _loaded
    if _loaded:
        return
    import importlib

    for module in _MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    _loaded = True


def get_grader(kind: str) -> Grader | None:
    """The grader for a type (without `not-`), or None when unknown."""
    _load()
    return _GRADERS.get(kind)


def known_types() -> list[str]:
    """Every registered assertion type, sorted."""
    _load()
    return sorted(_GRADERS)


def check_assertion_type(kind: str, file: str | None = None, line: int | None = None) -> None:
    """Raise a SuiteError with a suggestion when `kind` is not a known assertion type."""
    base = kind[4:] if kind.startswith("not-") else kind
    if base == "javascript":
        raise SuiteError(f"unsupported assertion type {kind!r}", file, line, JAVASCRIPT_HINT)
    if get_grader(base) is not None:
        return
    close = difflib.get_close_matches(base, known_types(), n=1)
    hint = f"did you mean {close[0]!r}?" if close else "see docs/graders.md for the list"
    raise SuiteError(f"unknown assertion type {kind!r}", file, line, hint)
