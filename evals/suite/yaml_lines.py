"""YAML loading that remembers the line of every mapping, for error messages.

Scalars resolve with the YAML 1.2 core schema, as promptfoo reads configs
(`evals.common.yaml12`).

Documents are built straight from the parser's events, so a suite of many thousand tests
never holds PyYAML's whole node tree (with two source marks per node) in memory: that
tree is several times larger than the data it describes. Anything the event builder does
not handle (custom tags, recursive anchors, complex keys, several documents,
`<<` merge keys, errors) goes through PyYAML's own composer and constructor, which
also gives the error message.

Both paths refuse what js-yaml (and so promptfoo) refuses and what would make later
steps hang: a mapping key written twice (the error names both lines), and aliases that
stand for more than `MAX_ALIAS_NODES` nodes in all (an "alias bomb": a few hundred bytes
of nested aliases that expand to billions of values when the suite is walked or stored).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from evals.common.files import read_text
from evals.common.jsvalues import js_string
from evals.common.yaml12 import CoreLoader
from evals.model.errors import SuiteError

MAX_ALIAS_NODES = 100_000
"""Most nodes the aliases of one YAML file may stand for, all aliases together."""


class YAMLLimitError(yaml.MarkedYAMLError):
    """A document refused for its aliases or a duplicate key; `line` is 1-based."""

    def __init__(self, problem: str, line: int, fix: str) -> None:
        super().__init__(problem=problem)
        self.line = line
        self.fix = fix

    def __str__(self) -> str:
        return f"line {self.line}: {self.problem}"


def _key_text(key: Any) -> str:
    """A mapping key as js-yaml compares keys: as JavaScript's String() of the value."""
    return key if isinstance(key, str) else js_string(key)


def _duplicate_key(key: Any, first: int, again: int) -> YAMLLimitError:
    return YAMLLimitError(
        f"duplicate key {_key_text(key)!r} (first at line {first}, again at line {again}); "
        "YAML keeps only one of them",
        again,
        "remove one of the two, or merge them into one key",
    )


class _AliasBudget:
    """Counts the nodes that aliases stand for and refuses a document beyond the budget."""

    def __init__(self) -> None:
        self.expanded = 0
        self.first_line = 0

    def add(self, size: int, line: int, name: str | None) -> None:
        self.first_line = self.first_line or line
        self.expanded += size
        if self.expanded > MAX_ALIAS_NODES:
            raise YAMLLimitError(
                f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} values (an alias bomb: "
                f"aliases from line {self.first_line} on, the limit reached at *{name} on "
                f"line {line})",
                self.first_line,
                "write the values out, or use fewer nested aliases (*name)",
            )


class LineDict(dict[Any, Any]):
    """A dict that knows the 1-based line it started on, and the line of each key.

    `file`, when set, is the file it was read from when that is not the suite (a
    dataset), so errors about it name that file.
    """

    __slots__ = ("file", "key_lines", "line")
    line: int
    key_lines: dict[str, int]
    file: str | None


class LineList(list[Any]):
    """A list that knows the 1-based line it started on (its first item, or its `[`)."""

    __slots__ = ("line",)
    line: int


class _LineLoader(CoreLoader):
    """The core-schema safe loader (libyaml's C parser) whose mappings are LineDicts."""

    def get_single_node(self) -> Any:
        """The document's node graph, refused when its aliases stand for too many nodes."""
        node = super().get_single_node()
        if node is not None:
            _count_aliases(node)
        return node


def _count_aliases(root: yaml.Node) -> None:
    """Walk a composed node graph (an alias is its anchor's node, shared) and charge every
    further reference to a collection to the alias budget. Iterative, for deep documents;
    a node inside itself (a recursive anchor) counts once and is left to the constructor."""
    budget = _AliasBudget()
    sizes: dict[int, int] = {}
    active: set[int] = set()
    frames: list[tuple[yaml.Node, Iterator[yaml.Node], list[int]]] = []

    def enter(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            line = node.start_mark.line + 1
            budget.add(sizes[key], line, getattr(node, "anchor", None) or "alias")
            return sizes[key]
        if key in active or not isinstance(node, yaml.CollectionNode):
            return 1
        active.add(key)
        items = node.value
        is_mapping = isinstance(node, yaml.MappingNode)
        children = (c for pair in items for c in pair) if is_mapping else iter(items)
        frames.append((node, children, [1]))
        return 0

    enter(root)
    while frames:
        node, children, total = frames[-1]
        child = next(children, None)
        if child is not None:
            total[0] += enter(child)
            continue
        frames.pop()
        active.discard(id(node))
        sizes[id(node)] = total[0]
        if frames:
            frames[-1][2][0] += total[0]


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    seen: dict[str, int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode):
            kind = "list" if isinstance(key, yaml.SequenceNode) else "mapping"
            raise YAMLLimitError(
                f"a key of this mapping is a {kind} (a YAML complex key, `? ...`); keys are "
                "text or numbers, as in JSON",
                key.start_mark.line + 1,
                "write the key as text (quote it: '\"a, b\": 1')",
            )
        if key.tag != _MERGE_TAG:
            text = _key_text(loader.construct_object(key))
            line = key.start_mark.line + 1
            if text in seen:
                raise _duplicate_key(text, seen[text], line)
            seen[text] = line
    loader.flatten_mapping(node)
    mapping = LineDict(loader.construct_pairs(node, deep=True))
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {
        key.value: key.start_mark.line + 1 for key, _ in node.value if isinstance(key.value, str)
    }
    return mapping


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> Iterator[LineList]:
    sequence = LineList()
    sequence.line = node.start_mark.line + 1
    yield sequence  # as PyYAML's own constructor: a list may hold itself through an alias
    sequence.extend(loader.construct_sequence(node))


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)

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
        self.anchor_sizes: dict[str | None, int] = {}
        self.nodes = 0  # nodes built so far, those aliases stand for included
        self.budget = _AliasBudget()
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
        self.nodes += 1
        if isinstance(event, yaml.ScalarEvent) and event.anchor is None:
            return self.scalar(event)
        if isinstance(event, yaml.AliasEvent):
            value = self.anchors.get(event.anchor, _Unsupported)
            if value is _Unsupported:  # unknown, or an alias inside its own anchor
                raise _Unsupported
            size = self.anchor_sizes[event.anchor]
            self.budget.add(size, _line(event), event.anchor)
            self.nodes += size - 1
            return value
        if event.anchor in self.anchors:
            raise _Unsupported  # PyYAML reports the duplicate anchor
        start = self.nodes - 1
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
            self.anchor_sizes[event.anchor] = self.nodes - start
        return value

    def scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolved(event)
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

    def sequence(self, event: yaml.SequenceStartEvent) -> LineList:
        items = LineList()
        items.line = _line(event)
        next_event = self.loader.get_event
        while not isinstance(item := next_event(), yaml.SequenceEndEvent):
            items.append(self.node(item))
        return items

    def mapping(self, event: yaml.MappingStartEvent) -> LineDict:
        pairs: list[tuple[Any, Any]] = []
        key_lines: dict[str, int] = {}
        seen: dict[str, int] = {}
        next_event = self.loader.get_event
        while not isinstance(key_event := next_event(), yaml.MappingEndEvent):
            line = _line(key_event)
            key: Any = _Unsupported
            if isinstance(key_event, yaml.ScalarEvent):
                key_lines[key_event.value] = line
                if key_event.tag is None:
                    kind = self.resolved(key_event)
                    if kind == _MERGE_TAG:
                        raise _Unsupported  # `<<` merges follow PyYAML's own rules
                    if kind == _STR_TAG and key_event.anchor is None:
                        self.nodes += 1  # a plain string key: as `node` builds it
                        key = key_event.value
            if key is _Unsupported:
                key = self.node(key_event)
                if isinstance(key, (dict, list)):
                    raise _Unsupported
            text = key if isinstance(key, str) else _key_text(key)
            if text in seen:
                raise _duplicate_key(text, seen[text], line)
            seen[text] = line
            pairs.append((key, self.node(next_event())))
        mapping = LineDict(pairs)
        mapping.line = _line(event)
        mapping.key_lines = key_lines
        return mapping

    def resolved(self, event: yaml.ScalarEvent) -> str:
        """The tag of an untagged scalar by the core schema's resolvers, remembered: suites
        repeat the same keys and values."""
        resolved = (event.value, event.implicit)
        tag = self.tags.get(resolved)
        if tag is None:
            tag = self.tags[resolved] = self.loader.resolve(
                yaml.ScalarNode, event.value, event.implicit
            )
        return tag


def _line(event: yaml.Event) -> int:
    """The 1-based line an event starts on (every parsed event has a start mark)."""
    return 0 if event.start_mark is None else event.start_mark.line + 1


def parse_yaml_text(text: str) -> Any:
    """The document in `text`, as PyYAML's safe loading with line-aware mappings gives it."""
    loader = _LineLoader(text)
    try:
        return _EventBuilder(loader).document()
    except YAMLLimitError:
        raise
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


def plain(value: Any) -> Any:
    """A copy of `value` whose mappings and lists are plain dicts and lists, without the
    lines a LineDict or LineList keeps: data another process unpickles without importing
    the suite's modules, and smaller and quicker to pickle (the suite's configuration
    handed to the JSON report). Parts shared in `value`, or holding themselves, are
    shared in the copy as well."""
    return _plain(value, {})


_LEAVES = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any, copies: dict[int, Any]) -> Any:
    if isinstance(value, dict):
        copied = copies.get(id(value))
        if copied is None:
            copied = copies[id(value)] = {}
            for key, item in value.items():
                copied[key] = item if type(item) in _LEAVES else _plain(item, copies)
        return copied
    if isinstance(value, list):
        copied = copies.get(id(value))
        if copied is None:
            copied = copies[id(value)] = []
            copied.extend(i if type(i) in _LEAVES else _plain(i, copies) for i in value)
        return copied
    return value


def keep_lines(source: Any, target: dict[Any, Any]) -> dict[Any, Any]:
    """Give a mapping rebuilt from `source` the YAML lines of `source` (when it has any)."""
    if isinstance(source, LineDict) and isinstance(target, LineDict):
        target.line = getattr(source, "line", 0)
        target.key_lines = getattr(source, "key_lines", {})
        target.file = getattr(source, "file", None)
    return target


def file_of(value: Any) -> str | None:
    """The file a mapping was read from, when that is not the suite (see `LineDict`)."""
    return getattr(value, "file", None)


def mark_origin(value: Any, file: str, line: int = 0) -> Any:
    """`value` with every mapping in it a LineDict that names `file` (a dataset's tests).

    Mappings read from YAML keep their lines; others (JSON, CSV) get `line` for the
    outermost one when known. Lists are rebuilt only around rebuilt mappings.
    """
    if isinstance(value, list):
        items = [mark_origin(item, file) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if not isinstance(value, dict):
        return value
    marked = value if isinstance(value, LineDict) else LineDict(value)
    if marked is not value:
        marked.line = line
        marked.key_lines = {}
    marked.file = file
    for key, item in marked.items():
        if isinstance(item, (dict, list)):
            marked[key] = mark_origin(item, file)
    return marked


def line_of(value: Any, key: str | None = None) -> int | None:
    """The line of `key` in a mapping (or where the mapping or list starts), when it came
    from YAML."""
    if key is not None:
        line = getattr(value, "key_lines", {}).get(key)
        if line is not None:
            return line
    return getattr(value, "line", None)


def load_yaml(path: Path, what: str = "the file") -> Any:
    """Parse a YAML file, turning every problem into a SuiteError at the right line.

    The file must be UTF-8 (`read_text`); characters YAML does not allow (NUL, other
    control characters), syntax errors, duplicate keys, alias bombs and nesting too deep
    for the parser are refused with the line and the fix.
    """
    return parse_yaml_file_text(read_text(path, what), path)


def parse_yaml_file_text(text: str, path: Path) -> Any:
    """`parse_yaml_text` for the text of `path`, its errors as SuiteErrors naming the file."""
    try:
        return parse_yaml_text(text)
    except YAMLLimitError as exc:
        raise SuiteError(str(exc.problem), file=str(path), line=exc.line, fix=exc.fix) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1])
        raise SuiteError(
            f"YAML does not allow the character U+{code:04X} ({exc.reason}) at line {line}",
            file=str(path),
            line=line,
            fix='remove the character, or write it as an escape inside double quotes ("\\0")',
        ) from None
    except RecursionError:
        raise SuiteError(
            "YAML nested too deep to read",
            file=str(path),
            fix="flatten the structure (a suite needs no more than a few levels of nesting)",
        ) from None
    except yaml.constructor.ConstructorError as exc:
        tag = _UNKNOWN_TAG.search(exc.problem or "")
        if tag is None:
            raise _syntax_error(exc, path) from None
        mark = exc.problem_mark or exc.context_mark
        name = tag.group(1) if tag.group(1).startswith("!") else f"!<{tag.group(1)}>"
        raise SuiteError(
            f"YAML tag {name} is not allowed: suite files and datasets hold data "
            "(text, numbers, booleans, null, lists and mappings), never objects a tag "
            "would construct",
            file=str(path),
            line=mark.line + 1 if mark else None,
            fix="remove the tag, or quote the value to keep it as text",
        ) from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, path) from None


# PyYAML's message for a tag its safe loader has no constructor for.
_UNKNOWN_TAG = re.compile(r"could not determine a constructor for the tag '([^']*)'")


def _syntax_error(exc: yaml.MarkedYAMLError, path: Path) -> SuiteError:
    """A YAML syntax error as a SuiteError at its line."""
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or str(exc)
    return SuiteError(
        f"YAML syntax error: {problem}",
        file=str(path),
        line=mark.line + 1 if mark else None,
        fix="fix the indentation or quoting at that line (quote strings containing ': ')",
    )
