"""The table from assertion type to grader function, and type validation for suites."""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from typing import Any

from evals.common.files import is_file_ref
from evals.graders.base import GradeContext, GraderError
from evals.model.errors import SuiteError
from evals.model.results import Grade

# A grader is a plain function; graders that call out (LLM judges) are coroutine functions.
Grader = Callable[[GradeContext], Grade | Awaitable[Grade]]
ValueCheck = Callable[[Any], None]
_GRADERS: dict[str, Grader] = {}
_VALUE_CHECKS: dict[str, ValueCheck] = {}
# The assertion types each grader module registers, so a suite loads only the modules of
# the types it uses (all of them take a tenth of the start-up). tests/graders checks this
# table against what the modules register.
_TYPES_BY_MODULE: dict[str, tuple[str, ...]] = {
    "evals.graders.output": (
        "contains",
        "contains-all",
        "contains-any",
        "cost",
        "equals",
        "finish-reason",
        "icontains",
        "icontains-all",
        "icontains-any",
        "is-refusal",
        "latency",
        "regex",
        "starts-with",
        "word-count",
    ),
    "evals.graders.structured": ("contains-html", "contains-json", "is-html", "is-json"),
    "evals.graders.python_assert": ("python",),
    "evals.graders.javascript": ("javascript",),
    "evals.graders.ruby_assert": ("ruby",),
    "evals.graders.text_metrics": ("bleu", "gleu", "levenshtein", "meteor", "rouge-n"),
    "evals.graders.sets": ("assert-set",),
    "evals.graders.trajectory": (
        "tool-call-f1",
        "trajectory:match",
        "trajectory:step-count",
        "trajectory:tool-args-match",
        "trajectory:tool-sequence",
        "trajectory:tool-used",
    ),
    "evals.graders.budget": ("budget",),
    "evals.graders.verifier": ("verifier",),
    "evals.graders.policy": ("policy",),
    "evals.graders.final_state": ("final-state",),
    "evals.graders.markup": ("contains-xml", "is-xml"),
    "evals.graders.sql": ("contains-sql", "is-sql"),
    "evals.graders.model_graded": (
        "factuality",
        "llm-rubric",
        "model-graded-closedqa",
        "trajectory:goal-success",
    ),
    "evals.graders.g_eval": ("g-eval",),
    "evals.graders.rag": (
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
    ),
    "evals.graders.similarity": ("similar", "similar:cosine", "similar:dot", "similar:euclidean"),
    "evals.graders.tools_call": (
        "is-valid-function-call",
        "is-valid-openai-function-call",
        "is-valid-openai-tools-call",
        "skill-used",
    ),
    "evals.graders.guardrails": ("guardrails",),
    "evals.graders.webhook": ("webhook",),
    "evals.graders.trace": ("trace-error-spans", "trace-span-count", "trace-span-duration"),
    "evals.graders.completeness": ("trace-complete", "trace-completeness"),
    "evals.graders.permissions": ("permission",),
    "evals.graders.ranking": ("max-score", "select-best"),
    "evals.graders.perplexity": ("perplexity", "perplexity-score"),
}
_MODULE_OF_TYPE = {kind: module for module, kinds in _TYPES_BY_MODULE.items() for kind in kinds}
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


def register(*names: str) -> Callable[[Grader], Grader]:
    """Decorator: make a grader available under one or more assertion types."""

    def wrap(fn: Grader) -> Grader:
        for name in names:
            _GRADERS[name] = fn
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
    global _loaded
    if _loaded:
        return
    for module in _TYPES_BY_MODULE:
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
    """Import the module that registers `kind` (every module when no table entry names it)."""
    module = _MODULE_OF_TYPE.get(kind)
    if module is None:
        _load()
    elif kind not in _GRADERS and kind not in _VALUE_CHECKS:
        _import(module)


def get_grader(kind: str) -> Grader | None:
    """The grader registered for an assertion type (without `not-`), or None."""
    grader = _GRADERS.get(kind)
    if grader is None:
        _load_type(kind)
        grader = _GRADERS.get(kind)
    return grader


def known_types() -> list[str]:
    """Every registered assertion type, sorted."""
    _load()
    return sorted(_GRADERS)


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
