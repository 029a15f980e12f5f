"""Prompt and value templating: Nunjucks, as promptfoo renders templates.

Templates render with Nunjucks 3.2.4 itself, inside the JavaScript sandbox of
`evals.common.jsengine` (no autoescaping, undefined variables print empty, a `load`
filter, `nunjucksFilters` from the suite, no file loader), with that sandbox's time,
memory and output limits. Plain templates, text with `{{ name }}` slots only (the common
prompt shape), are filled in Python without starting the engine: a slot prints what
Nunjucks prints, JavaScript's `String()` of the value.

`env` (the process environment and the suite's `env:` block) is passed only to templates
the suite author wrote, the prompts, and only the variables a prompt reads (found by
parsing it); values from test data render without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from evals.common import jsengine
from evals.common.jsvalues import js_string

NUNJUCKS_GLOBALS = frozenset({"env", "range", "cycler", "joiner"})


class TemplateError(ValueError):
    """A template that does not compile or render; `line` is its 1-based line when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def nunjucks_text(value: Any) -> str:
    """How Nunjucks prints a value in `{{ }}`: empty for null, else JavaScript's String()."""
    return "" if value is None else js_string(value)


_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@lru_cache(maxsize=4096)
def placeholders(source: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(literal parts, variable names) when `source` is plain text with `{{ name }}` only.

    Such templates, the common prompt shape, are filled without the JavaScript engine;
    anything else (filters, tags, comments, whitespace control, carriage returns, the
    Nunjucks globals) goes through Nunjucks.
    """
    if "\r" in source or "{%" in source or "{#" in source:
        return None
    parts = _PLACEHOLDER.split(source)
    literals, names = tuple(parts[::2]), tuple(parts[1::2])
    if any("{{" in literal or "}}" in literal for literal in literals):
        return None
    if NUNJUCKS_GLOBALS.intersection(names):
        return None
    return literals, names


def _fill(plan: tuple[tuple[str, ...], tuple[str, ...]], variables: Mapping[str, Any]) -> str:
    literals, names = plan
    pieces = [literals[0]]
    for name, literal in zip(names, literals[1:], strict=True):
        pieces.append(nunjucks_text(variables.get(name)))
        pieces.append(literal)
    return "".join(pieces)


def _line_of(message: str) -> int | None:
    found = re.search(r"\[Line (\d+), Column \d+\]", message)
    return int(found.group(1)) if found else None


def _template_error(exc: jsengine.JavaScriptError) -> TemplateError:
    text = exc.message if exc.name == "Template render error" else str(exc)
    text = text.replace("(unknown path)", "").replace("\n ", "").strip()
    return TemplateError(f"Template render error: {text}", _line_of(exc.message))


def _calls_python_filter(source: str) -> bool:
    names = jsengine.host_filter_names()
    return bool(names) and any(re.search(rf"\b{re.escape(n)}\b", source) for n in names)


@lru_cache(maxsize=1024)
def _env_names(source: str) -> tuple[str, ...] | None:
    return jsengine.env_names(source)


def _env_scope(source: str, env: Mapping[str, str]) -> dict[str, str] | None:
    """The `env` a template the suite author wrote renders with: the variables it names
    (`env.NAME`, `env["NAME"]`, found by parsing it), all of them when it reads `env` some
    other way, or none (no `env` at all) when it does not read it."""
    names = _env_names(source)
    if names is None:
        return dict(env)
    if not names:
        return None
    return {name: env[name] for name in names if name in env}


def render(
    source: str,
    variables: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    *,
    test_data: bool = False,
    filters: bool = False,
) -> str:
    """Render a template with the test's vars (and `env`, for templates the author wrote).

    `filters` makes the suite's nunjucksFilters available: promptfoo renders prompts (and
    the vars inside them) with them, and everything else without. Raises TemplateError
    when the template does not compile or render, or exceeds the sandbox's limits. A
    template calling one of the suite's Python filters runs without the time limit
    (QuickJS cannot call Python under one), unless it is `test_data`: a value from the
    tests, which always keeps the limit (and so cannot call those filters).
    """
    if "{{" not in source and "{%" not in source and "{#" not in source:
        return source
    plan = placeholders(source)
    if plan is not None:
        return _fill(plan, variables)
    scope_env = None if env is None or "env" not in source else _env_scope(source, env)
    limited = test_data or not (filters and _calls_python_filter(source))
    try:
        return jsengine.render(source, dict(variables), scope_env, limited, filters)
    except jsengine.JavaScriptError as exc:
        raise _template_error(exc) from None


def render_value(
    value: Any,
    variables: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    *,
    filters: bool = False,
) -> Any:
    """Render every string leaf of a value (assertion values, JSON prompts)."""
    if isinstance(value, str):
        return render(value, variables, env, filters=filters)
    if isinstance(value, list):
        return [render_value(v, variables, env, filters=filters) for v in value]
    if isinstance(value, dict):
        return {k: render_value(v, variables, env, filters=filters) for k, v in value.items()}
    return value


def check_template(source: str) -> None:
    """Compile a template (a load-time check); TemplateError naming the line when invalid."""
    if placeholders(source) is not None or ("{{" not in source and "{%" not in source):
        return
    try:
        jsengine.call("compile", source)
    except jsengine.JavaScriptError as exc:
        raise _template_error(exc) from None


def register_filters(filters: Mapping[str, Callable[..., Any]]) -> None:
    """Add Python filters (`nunjucksFilters: {name: file://filters.py}`) to templates."""
    for name, function in filters.items():
        jsengine.register_host_filter(name, function)


_ESM_DEFAULT = re.compile(r"^export\s+default\s+", re.M)


def register_script_filter(name: str, source: str) -> None:
    """Add a filter from a JavaScript file (`module.exports = function ...` or an
    `export default` function), as promptfoo loads them; TemplateError when it does not load.
    """
    try:
        jsengine.register_script_filter(name, _ESM_DEFAULT.sub("module.exports = ", source))
    except jsengine.JavaScriptError as exc:
        raise TemplateError(str(exc)) from None
