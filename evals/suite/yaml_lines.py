"""YAML loading that remembers the line of every mapping, for error messages.

Scalars resolve with the YAML 1.2 core schema, as promptfoo reads configs
(`evals.common.yaml12`).

Documents are built straight from the parser's events, so a suite of many thousand tests
never holds PyYAML's whole node tree (with two source marks per node) in memory: that
tree is several times larger than the data it describes. Anything the event builder does
not handle (custom tags, recursive anchors, complex keys, several documents,
`<<` merge keys, errors) goes through PyYAML's own composer and constructor, which
also gives the error message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from evals.common.yaml12 import CoreLoader
from evals.model.errors import SuiteError


class LineDict(dict[Any, Any]):
    """A dict that knows the 1-based line it started on, and the line of each key."""

    __slots__ = ("key_lines", "line")
    line: int
    key_lines: dict[str, int]


class _LineLoader(CoreLoader):
    """The core-schema safe loader (libyaml's C parser) whose mappings are LineDicts."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict(loader.construct_pairs(node, deep=True))
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {
        key.value: key.start_mark.line + 1 for key, _ in node.value if isinstance(key.value, str)
    }
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

_MAP_TAG = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG
_SEQ_TAG = yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


class _Unsupported(Exception):
    """The event builder leaves this document to PyYAML's composer."""


class _EventBuilder:
    """Builds one document from parser events, as `yaml.load(text, _LineLoader)` would."""

    def __init__(self, loader: _LineLoader) -> None:
        self.loader = loader
        self.anchors: dict[str | None, Any] = {}
        # Suites repeat the same keys and values; each resolves to the same tag.
        self.tags: dict[tuple[str, Any], str] = {}

    def document(self) -> Any:
        loader = self.loader
        loader.get_event()  # stream start
        if loader.check_event(yaml.StreamEndEvent):
            return None
        loader.get_event()  # document start
        value = self.node(loader.get_event())
        loader.get_event()  # document end
        if not loader.check_event(yaml.StreamEndEvent):
            raise _Unsupported  # several documents: PyYAML reports it
        return value

    def node(self, event: Any) -> Any:
        if isinstance(event, yaml.ScalarEvent) and event.anchor is None:
            return self.scalar(event)
        if isinstance(event, yaml.AliasEvent):
            value = self.anchors.get(event.anchor, _Unsupported)
            if value is _Unsupported:  # unknown, or an alias inside its own anchor
                raise _Unsupported
            return value
        if event.anchor in self.anchors:
            raise _Unsupported  # PyYAML reports the duplicate anchor
        if isinstance(event, yaml.ScalarEvent):
            value = self.scalar(event)
        elif isinstance(event, yaml.SequenceStartEvent):
            value = self.collection(event, _SEQ_TAG, self.sequence)
        elif isinstance(event, yaml.MappingStartEvent):
            value = self.collection(event, _MAP_TAG, self.mapping)
        else:
            raise _Unsupported
        if event.anchor is not None:
            self.anchors[event.anchor] = value
        return value

    def scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            resolved = (event.value, event.implicit)
            tag = self.tags.get(resolved)
            if tag is None:
                tag = self.tags[resolved] = self.loader.resolve(
                    yaml.ScalarNode, event.value, event.implicit
                )
        if tag == _STR_TAG:
            return event.value  # what SafeConstructor gives a string, without building a node
        constructor = self.loader.yaml_constructors.get(tag)
        if constructor is None:
            raise _Unsupported
        # libyaml's events carry its own Mark class, which the stubs do not list for nodes.
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)  # type: ignore[arg-type]
        return constructor(self.loader, node)

    def collection(self, event: Any, default_tag: str, build: Callable[[Any], Any]) -> Any:
        if event.tag not in (None, "!", default_tag):
            raise _Unsupported
        if event.anchor is not None:
            self.anchors[event.anchor] = _Unsupported  # until built: aliases inside recurse
        return build(event)

    def sequence(self, event: yaml.SequenceStartEvent) -> list[Any]:
        items = []
        next_event = self.loader.get_event
        while not isinstance(item := next_event(), yaml.SequenceEndEvent):
            items.append(self.node(item))
        return items

    def mapping(self, event: yaml.MappingStartEvent) -> LineDict:
        pairs: list[tuple[Any, Any]] = []
        key_lines: dict[str, int] = {}
        next_event = self.loader.get_event
        while not isinstance(key_event := next_event(), yaml.MappingEndEvent):
            if isinstance(key_event, yaml.ScalarEvent):
                key_lines[key_event.value] = _line(key_event)
                if key_event.tag is None:
                    kind = self.tags.get((key_event.value, key_event.implicit))
                    if kind is None:
                        kind = self.loader.resolve(
                            yaml.ScalarNode, key_event.value, key_event.implicit
                        )
                    if kind == _MERGE_TAG:
                        raise _Unsupported  # `<<` merges follow PyYAML's own rules
            key = self.node(key_event)
            if isinstance(key, (dict, list)):
                raise _Unsupported
            pairs.append((key, self.node(next_event())))
        mapping = LineDict(pairs)
        mapping.line = _line(event)
        mapping.key_lines = key_lines
        return mapping


def _line(event: yaml.Event) -> int:
    """The 1-based line an event starts on (every parsed event has a start mark)."""
    return 0 if event.start_mark is None else event.start_mark.line + 1


def parse_yaml_text(text: str) -> Any:
    """The document in `text`, as PyYAML's safe loading with line-aware mappings gives it."""
    loader = _LineLoader(text)
    try:
        return _EventBuilder(loader).document()
    except (_Unsupported, yaml.YAMLError, TypeError, ValueError):
        pass
    finally:
        loader.dispose()
    return yaml.load(text, Loader=_LineLoader)


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


def keep_lines(source: Any, target: dict[Any, Any]) -> dict[Any, Any]:
    """Give a mapping rebuilt from `source` the YAML lines of `source` (when it has any)."""
    if isinstance(source, LineDict) and isinstance(target, LineDict):
        target.line = source.line
        target.key_lines = getattr(source, "key_lines", {})
    return target


def line_of(value: Any, key: str | None = None) -> int | None:
    """The line of `key` in a mapping (or where the mapping starts), when it came from YAML."""
    if key is not None:
        line = getattr(value, "key_lines", {}).get(key)
        if line is not None:
            return line
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
        return parse_yaml_text(text)
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
