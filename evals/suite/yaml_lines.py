"""YAML loading that remembers the line of every mapping, for error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from evals.errors import SuiteError


class LineDict(dict):
    """A dict that knows the 1-based line it started on in its YAML file."""

    __slots__ = ("line",)


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A safe loader (libyaml's C parser when available) whose mappings are LineDicts."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict(loader.construct_pairs(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def kind_name(value: Any) -> str:
    """The YAML name of a value's type, for messages ("a mapping", not "LineDict")."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "empty" if value is None else type(value).__name__


def line_of(value: Any) -> int | None:
    """The line a mapping started on, when it came from YAML."""
    return getattr(value, "line", None)


def load_yaml(path: Path) -> Any:
    """Parse a YAML file, turning syntax errors into a SuiteError at the right line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(
            "file not found", file=str(path), fix="check the path (relative to the suite)"
        ) from None
    try:
        return yaml.load(text, Loader=_LineLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        raise SuiteError(
            f"YAML syntax error: {problem}",
            file=str(path),
            line=line,
            fix="fix the indentation or quoting at that line (quote strings containing ': ')",
        ) from None
