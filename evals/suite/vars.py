"""Test vars as promptfoo treats them: array expansion, `file://` values, prompt rendering.

A var whose value is a list of strings stands for one test per item, and several such
vars give their cartesian product; a list whose first item is not a string is one value.
At render time a `file://` var is replaced by the file's content (text trimmed, YAML as
JSON, a Python file by its `get_var(var_name, prompt, other_vars)` output).
"""

from __future__ import annotations

import functools
import json
import re
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from evals.common.files import is_file_ref, ref_body
from evals.common.templating import render, render_value
from evals.model.errors import SuiteError
from evals.suite.yaml_lines import keep_lines


def var_combinations(variables: dict[str, Any]) -> list[dict[str, Any]]:
    """Every combination of the vars' values, in promptfoo's order (last var varies fastest)."""
    choices: list[list[Any]] = []
    for value in variables.values():
        is_expandable = isinstance(value, list) and bool(value) and isinstance(value[0], str)
        choices.append(list(value) if is_expandable else [value])
    keys = list(variables)
    return [dict(zip(keys, combo, strict=True)) for combo in product(*choices)]


def _python_var(path: Path, name: str, prompt: str, variables: dict[str, Any]) -> str:
    from evals.common.files import load_function

    result = load_function(path, "get_var", f"var {name!r}")(name, prompt, variables)
    if isinstance(result, dict) and result.get("error"):
        raise SuiteError(f"get_var for {name!r} failed: {result['error']}", file=str(path))
    output = result.get("output") if isinstance(result, dict) else result
    if not isinstance(output, str) or not output:
        raise SuiteError(
            f"get_var for {name!r} returned no output",
            file=str(path),
            fix="return {'output': 'text'} from get_var(var_name, prompt, other_vars)",
        )
    return output.strip()


def load_var_file(ref: str, name: str, prompt: str, variables: dict[str, Any], root: Path) -> str:
    """The value a `file://` var stands for when a prompt is rendered."""
    path = root / ref_body(ref)
    if path.suffix == ".py":
        return _python_var(path, name, prompt, variables)
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        return json.dumps(yaml.safe_load(text), ensure_ascii=False, separators=(",", ":"))
    return text.strip()


def resolve_vars(variables: dict[str, Any], prompt: str, root: Path) -> dict[str, Any]:
    """Vars with `file://` values loaded and one trailing newline dropped from strings.

    Returns `variables` itself when nothing changes, so callers can tell cheaply.
    """
    if not any(
        isinstance(v, str) and (is_file_ref(v) or v.endswith("\n")) for v in variables.values()
    ):
        return variables
    resolved = dict(variables)
    for name, value in variables.items():
        if is_file_ref(value):
            resolved[name] = load_var_file(value, name, prompt, resolved, root)
    return {
        k: v[:-1] if isinstance(v, str) and v.endswith("\n") else v for k, v in resolved.items()
    }


_JSON_STARTS = frozenset('{["-0123456789tfnNI')


_NOT_JSON = object()


@functools.lru_cache(maxsize=256)
def _json_prompt(template: str) -> Any:
    """The template parsed as JSON, or `_NOT_JSON`; every run of a prompt asks the same."""
    if template.lstrip()[:1] in _JSON_STARTS:
        try:
            return json.loads(template)
        except ValueError:
            pass
    return _NOT_JSON


def render_prompt_text(template: str, variables: dict[str, Any]) -> str:
    """Render a prompt like promptfoo: a JSON prompt leaf by leaf, text with rendered vars."""
    parsed = _json_prompt(template)
    if parsed is not _NOT_JSON:
        return json.dumps(render_value(parsed, variables), ensure_ascii=False, indent=2)
    rendered_vars = {
        k: render(v, variables) if isinstance(v, str) else v for k, v in variables.items()
    }
    return render(template, rendered_vars)


_ENV_REF = re.compile(r"\{\{\s*env\.(\w+)\s*\}\}")


def render_env_refs(value: Any, env: dict[str, str]) -> Any:
    """Replace `{{ env.NAME }}` in every string of a config, as promptfoo does at load.

    Names not set are left as written; mappings keep their YAML lines. Parts without a
    reference come back as the same objects, so a config without any is not copied.
    """
    if isinstance(value, str):
        if "env." not in value:
            return value
        return _ENV_REF.sub(lambda m: env.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        items = [render_env_refs(v, env) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        rendered = {k: render_env_refs(v, env) for k, v in value.items()}
        if all(rendered[k] is v for k, v in value.items()):
            return value
        return keep_lines(value, type(value)(rendered))
    return value
