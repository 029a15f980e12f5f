"""Prompt and value templating with promptfoo's Nunjucks semantics, on Jinja2.

No autoescaping, undefined variables render empty (as in Nunjucks), and `env` exposes
the process environment. Templates are compiled once and cached.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

import jinja2


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared Jinja2 environment configured like promptfoo's Nunjucks."""
    env = jinja2.Environment(
        autoescape=False, undefined=jinja2.Undefined, keep_trailing_newline=True
    )
    env.filters["dump"] = _dump
    env.filters["json"] = _dump
    env.filters["load"] = json.loads
    env.globals["env"] = dict(os.environ)
    return env


@lru_cache(maxsize=4096)
def _compile(source: str) -> jinja2.Template:
    return environment().from_string(source)


def render(source: str, variables: dict[str, Any]) -> str:
    """Render a template string with the test's vars; plain strings are returned as is."""
    if "{{" not in source and "{%" not in source:
        return source
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
