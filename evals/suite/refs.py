"""JSON references (`$ref`) in a suite, resolved when it loads, as promptfoo resolves them.

promptfoo passes the whole config through json-schema-ref-parser's `dereference` (and each
YAML/JSON tests file through it again, on its own): every mapping `{$ref: '#/a/b'}` is
replaced by the value that JSON pointer names, so `assertionTemplates`, shared vars or
whole tests can be written once. `{$ref: other.yaml#/a}` reads another YAML or JSON file
(relative to the file holding the reference). A `$ref` with sibling keys extends its
target: the siblings are kept and the target's other keys added (mappings under the same
key are merged, the siblings winning). The JSON schemas of provider `functions` and
`tools` (`parameters`) are left as written, as promptfoo leaves them. A reference whose
target is missing, or that refers to itself, is a load error naming its line.

A dataset's references are data: they may only name files inside the suite's folder or
the dataset's own (symbolic links followed), as its `file://` vars may; a reference to any
other file, an absolute path included, is a load error naming the dataset's line.

Mappings and lists keep the YAML lines they were read with; an extending `$ref` takes the
line of the reference.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from evals.common.paths import LinkLoop, inside, resolve
from evals.model.errors import SuiteError
from evals.suite.yaml_lines import (
    MAX_ALIAS_NODES,
    LineDict,
    LineList,
    file_of,
    line_of,
    load_yaml,
    mark_origin,
)

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+://")
_FIX = "point $ref at an existing key, e.g. $ref: '#/assertionTemplates/NAME'"
MAX_REF_NODES = MAX_ALIAS_NODES
"""Values that references may stand for in all, as for YAML aliases: a few lines of
nested `$ref`s (a list of ten refs to a list of ten refs ...) would otherwise stand for
billions of values and hold the loader for hours."""


def is_ref(node: Any) -> bool:
    """A mapping json-schema-ref-parser dereferences: a non-empty string `$ref` that is a
    JSON pointer (`#`, `#/...`) or names another file (`#name` anchors are left alone)."""
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref:
        return False
    return ref == "#" or ref.startswith("#/") or not ref.startswith("#")


def pointer_tokens(pointer: str) -> list[str]:
    """RFC 6901 tokens of the part of a reference after `#` (`/a/b~1c` -> a, b/c)."""
    pointer = unquote(pointer)
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise ValueError(f'Invalid $ref pointer "{pointer}". Pointers must begin with "#/"')
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _copy_lines(source: Any, target: Any) -> Any:
    if isinstance(source, LineDict) and isinstance(target, LineDict):
        target.line = getattr(source, "line", 0)
        target.key_lines = dict(getattr(source, "key_lines", {}))
        target.file = getattr(source, "file", None)
    elif isinstance(source, LineList) and isinstance(target, LineList):
        target.line = getattr(source, "line", 0)
    return target


def _step(value: Any, token: str) -> tuple[bool, Any]:
    """(found, child) of one pointer token, as JavaScript property access finds it."""
    if isinstance(value, dict):
        return (token in value, value.get(token))
    if isinstance(value, list) and re.fullmatch(r"0|[1-9][0-9]*", token):
        index = int(token)
        return (index < len(value), value[index] if index < len(value) else None)
    return (False, None)


def _follow_tokens(root: Any, tokens: list[str]) -> tuple[Any, str | None]:
    """The value the tokens name, or (None, the first token that does not exist)."""
    value = root
    i = 0
    while i < len(tokens):
        found, child = _step(value, tokens[i])
        if not found:
            # a key may itself hold `/`: json-schema-ref-parser tries the joined tokens too
            joined = next(
                (
                    j
                    for j in range(len(tokens) - 1, i, -1)
                    if _step(value, "/".join(tokens[i : j + 1]))[0]
                ),
                None,
            )
            if joined is None:
                return None, tokens[i]
            child = _step(value, "/".join(tokens[i : joined + 1]))[1]
            i = joined
        value = child
        i += 1
    return value, None


def _deep_merge(target: Any, source: Any) -> Any:
    """json-schema-ref-parser's deepMerge: `source` wins; mappings merge, lists replace."""
    if not isinstance(target, dict) or not isinstance(source, dict):
        return source
    out = _copy_lines(target, LineDict(target) if isinstance(target, LineDict) else dict(target))
    for key, value in source.items():
        out[key] = _deep_merge(target.get(key), value) if isinstance(value, dict) else value
    return out


class Dereferencer:
    """Resolves the `$ref`s of one document (and of the files it refers to)."""

    def __init__(self, path: Path, root: Any, confine: tuple[Path, ...] = ()) -> None:
        self.path = path
        self.confine = confine  # the folders a dataset's references may read from
        self.documents: dict[Path, Any] = {path.resolve(): root}
        self.active: list[tuple[Path, str]] = []
        self.expanded = 0  # values walked inside references, against MAX_REF_NODES
        self.outermost: tuple[Any, Path] | None = None
        self.lines: list[int] = []  # the lines of the nodes being walked (a JSON row's)

    def walk(self, node: Any, doc: Path) -> Any:
        """`node` with every reference in it replaced by its (dereferenced) target."""
        if self.active:
            self.expanded += 1
            if self.expanded > MAX_REF_NODES:
                raise self.bomb()
        line = line_of(node)
        if line:
            self.lines.append(line)
        try:
            return self.replaced(node, doc)
        finally:
            if line:
                self.lines.pop()

    def replaced(self, node: Any, doc: Path) -> Any:
        """`walk` of one node."""
        if is_ref(node):
            return self.follow(node, doc)
        if isinstance(node, dict):
            values = {key: self.walk(value, doc) for key, value in node.items()}
            if all(values[key] is value for key, value in node.items()):
                return node
            built = LineDict(values) if isinstance(node, LineDict) else values
            return _copy_lines(node, built)
        if isinstance(node, list):
            items = [self.walk(item, doc) for item in node]
            if all(a is b for a, b in zip(items, node, strict=True)):
                return node
            return _copy_lines(node, LineList(items)) if isinstance(node, LineList) else items
        return node

    def follow(self, node: dict[Any, Any], doc: Path) -> Any:
        """The value a `$ref` mapping stands for, extended by its sibling keys."""
        ref: str = node["$ref"]
        location, _, pointer = ref.partition("#")
        target_doc = self.target_file(location, doc, node)
        if (target_doc, pointer) in self.active:
            raise self.error(f"$ref {ref!r} refers to itself (a circular reference)", node, doc)
        try:
            tokens = pointer_tokens(pointer)
        except ValueError as exc:
            raise self.error(str(exc), node, doc) from None
        value, missing = _follow_tokens(self.document(target_doc, node, doc), tokens)
        if missing is not None:
            raise self.error(
                f'Missing $ref pointer "#{pointer}". Token "{missing}" does not exist.',
                node,
                doc,
            )
        if not self.active:
            self.outermost = (node, doc)
        self.active.append((target_doc, pointer))
        try:
            resolved = self.walk(value, target_doc)
        finally:
            self.active.pop()
        if len(node) == 1 or not isinstance(resolved, dict):
            return resolved
        merged = LineDict()
        for key, sibling in node.items():
            if key != "$ref":
                merged[key] = self.walk(sibling, doc)
        for key, item in resolved.items():
            if key not in merged:
                merged[key] = item
            elif isinstance(merged[key], dict) and isinstance(item, dict):
                merged[key] = _deep_merge(item, merged[key])
        merged.line = line_of(node) or 0
        merged.key_lines = {**getattr(resolved, "key_lines", {}), **getattr(node, "key_lines", {})}
        merged.file = getattr(node, "file", None)
        return merged

    def target_file(self, location: str, doc: Path, node: Any) -> Path:
        """The file a reference points into: its own document when it names none."""
        if not location:
            return doc
        if _URL.match(location) and not location.startswith("file://"):
            raise self.error(
                f"$ref {location!r} names a URL; evals reads references to files only",
                node,
                doc,
                "copy the referenced document next to the suite and refer to it by path",
            )
        named = doc.parent / unquote(location.removeprefix("file://"))
        try:
            target = resolve(named)
        except LinkLoop:
            raise self.error(
                f"$ref {location!r} names {named}, a loop of symbolic links",
                node,
                doc,
                "point the $ref at the file itself",
            ) from None
        if self.confine and not inside(target, self.confine):
            raise self.error(
                f"$ref {location!r} reads {target}, which is outside the suite's folder: "
                "a dataset may only refer to files inside the suite's or its own folder",
                node,
                doc,
                "copy the file next to the suite or the dataset and refer to it by a path "
                "relative to the dataset",
            )
        return target

    def document(self, path: Path, node: Any, doc: Path) -> Any:
        """The parsed file `path` (YAML or JSON), read once."""
        if path not in self.documents:
            if not path.is_file():
                raise self.error(
                    f"$ref file not found: {path}", node, doc, "correct the path of the $ref"
                )
            self.documents[path] = mark_origin(load_yaml(path, "the $ref file"), str(path))
        return self.documents[path]

    def bomb(self) -> SuiteError:
        """The load error of references that stand for too many values, at the line of the
        outermost reference being followed."""
        node, doc = self.outermost or ({}, self.path)
        return self.error(
            f"$refs expand to more than {MAX_REF_NODES:,} values (a reference bomb: nested "
            "references each standing for many others)",
            node,
            doc,
            "write the values out, or nest fewer references to lists of references",
        )

    def error(self, message: str, node: Any, doc: Path, fix: str = _FIX) -> SuiteError:
        """A load error at the reference's line (or the line of the closest node around it
        that has one: a JSON dataset's row), in the file that holds the reference."""
        shown = self.path if doc == self.path.resolve() else doc
        line = line_of(node) or (self.lines[-1] if self.lines else None)
        return SuiteError(message, file=file_of(node) or str(shown), line=line, fix=fix)


def _provider_config(provider: Any) -> Any:
    if not isinstance(provider, dict):
        return None
    if "config" in provider:
        return provider.get("config")
    first = next(iter(provider.values()), None)
    return first.get("config") if isinstance(first, dict) else None


def _schemas(provider: Any) -> list[tuple[str, int, Any]]:
    """(list name, index, parameters) of a provider's functions and tools, as written."""
    config = _provider_config(provider)
    if not isinstance(config, dict):
        return []
    found: list[tuple[str, int, Any]] = []
    functions, tools = config.get("functions"), config.get("tools")
    for i, item in enumerate(functions if isinstance(functions, list) else []):
        if isinstance(item, dict) and item.get("parameters"):
            found.append(("functions", i, item["parameters"]))
    for i, item in enumerate(tools if isinstance(tools, list) else []):
        function = item.get("function") if isinstance(item, dict) else None
        if isinstance(function, dict) and function.get("parameters"):
            found.append(("tools", i, function["parameters"]))
    return found


def _restore_schemas(provider: Any, schemas: list[tuple[str, int, Any]]) -> None:
    config = _provider_config(provider)
    if not isinstance(config, dict):
        return
    for name, i, parameters in schemas:
        items = config.get(name)
        if not isinstance(items, list) or i >= len(items) or not isinstance(items[i], dict):
            continue
        holder = items[i] if name == "functions" else items[i].setdefault("function", {})
        if isinstance(holder, dict):
            holder["parameters"] = parameters


_REF_SPELLINGS = ("$ref", "\\x", "\\u", "\\U", "\\\n", "\\\r")
"""What a YAML or JSON text holding a `$ref` key contains: the key as written, or an escape
that can spell a character of it in a quoted key (`\\x24`, `\\u0072`, `\\U00000065`, or a
line break escaped inside the word)."""


def may_hold_ref(path: Path) -> bool:
    """False only when the file at `path` cannot hold a `$ref` key (most suites): its text
    holds none of `_REF_SPELLINGS`. Looking costs a small part of the dereferencing walk."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    return any(spelling in text for spelling in _REF_SPELLINGS)


def dereference_suite(raw: dict[str, Any], path: Path) -> Any:
    """The suite with its `$ref`s resolved, provider function/tool schemas left as written."""
    if not may_hold_ref(path):
        return raw
    providers = raw.get("providers")
    kept = [_schemas(p) for p in providers] if isinstance(providers, list) else []
    resolved = Dereferencer(path, raw).walk(raw, path.resolve())
    after = resolved.get("providers") if isinstance(resolved, dict) else None
    if isinstance(after, list):
        for provider, schemas in zip(after, kept, strict=False):
            _restore_schemas(provider, schemas)
    return resolved


def dereference_file(loaded: Any, path: Path, root: Path) -> Any:
    """A dataset's data with its `$ref`s resolved (within that file, or files it names,
    which must lie inside `root`, the suite's folder, or the dataset's own folder)."""
    if not may_hold_ref(path):
        return loaded
    confine = (resolve(root), resolve(path).parent)
    return Dereferencer(path, loaded, confine).walk(loaded, resolve(path))
