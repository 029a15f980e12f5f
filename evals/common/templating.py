"""Prompt and value templating with promptfoo's Nunjucks semantics, on Jinja2.

No autoescaping, undefined variables render empty (as in Nunjucks), and `env` exposes
the process environment. Templates are compiled once and cached; plain `{{ name }}`
templates, the common prompt shape, are filled without loading Jinja at all.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def nunjucks_text(value: Any) -> Any:
    """How Nunjucks prints a value: JavaScript's String() of it (None empty, lists joined)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, (list, tuple)):
        return ",".join(str(as_nunjucks_text(v)) for v in value)
    return value


def as_nunjucks_text(value: Any) -> Any:
    """`nunjucks_text`, with Jinja's undefined variables printed empty as Nunjucks does."""
    from jinja2 import Undefined

    return "" if isinstance(value, Undefined) else nunjucks_text(value)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared Jinja2 environment configured like promptfoo's Nunjucks."""
    import jinja2

    env = jinja2.Environment(
        autoescape=False,
        undefined=jinja2.Undefined,
        keep_trailing_newline=True,
        finalize=as_nunjucks_text,
    )
    env.filters["dump"] = _dump
    env.filters["json"] = _dump
    env.filters["load"] = json.loads
    env.globals["env"] = dict(os.environ)
    return env


@lru_cache(maxsize=4096)
def _compile(source: str) -> jinja2.Template:
    return environment().from_string(source)


_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@lru_cache(maxsize=4096)
def placeholders(source: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(literal parts, variable names) when `source` is plain text with `{{ name }}` only.

    Such templates, the common prompt shape, are filled without Jinja's per-render context;
    anything else (filters, tags, comments, carriage returns) goes through Jinja.
    """
    if "\r" in source or "{%" in source or "{#" in source:
        return None
    parts = _PLACEHOLDER.split(source)
    literals, names = tuple(parts[::2]), tuple(parts[1::2])
    if any("{{" in literal or "}}" in literal for literal in literals):
        return None
    return literals, names


def register_filters(filters: dict[str, Any]) -> None:
    """Add user filters (`nunjucksFilters`) to the shared environment."""
    environment().filters.update(filters)
    _compile.cache_clear()


def render(source: str, variables: dict[str, Any]) -> str:
    """Render a template string with the test's vars; plain strings are returned as is."""
    if "{{" not in source and "{%" not in source:
        return source
    plan = placeholders(source)
    if plan is not None and all(name in variables for name in plan[1]):
        literals, names = plan
        pieces = [literals[0]]
        for name, literal in zip(names, literals[1:], strict=True):
            pieces.append(str(nunjucks_text(variables[name])))
            pieces.append(literal)
        return "".join(pieces)
    return _compile(source).render(**variables)


def render_value(value: Any, variables: dict[str, Any]) -> Any:
    """Render every string leaf of a value (assertion values, JSON prompts)."""
    if isinstance(value, str):
        return render(value, variables)
    if isinstance(value, list):
        return [render_value(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: render_value(v, variables) for k, v in value.items()}
    return value
