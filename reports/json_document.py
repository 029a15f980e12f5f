"""promptfoo's output file as bytes: orjson, two-space indents, rows written one by one.

The document is serialized once without its rows (`results.results` holds a mark), then
the rows are written in between, each already serialized on its own. So the rows never
need to be one list in memory: `render_json` writes them as it reads the runs, the
report process (`json_stream.py`) from its spool file. NaN and infinities become null
(promptfoo reads the file with JSON.parse), unknown objects their text.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import IO, Any

import orjson

ROWS_MARK = "\u0000rows\u0000"
CONFIG_MARK = "\u0000config\u0000"
_MARK_BYTES = b'"\\u0000rows\\u0000"'
_CONFIG_MARK_BYTES = b'"\\u0000config\\u0000"'
_ROW_INDENT = b"      "  # rows sit at results -> results -> [i]
_OPTIONS = orjson.OPT_INDENT_2
# Keys that are not strings (a YAML `1:`) are written as JSON.parse would read them, in a
# second attempt: orjson serializes about a third slower when it must expect them.
_ANY_KEYS = _OPTIONS | orjson.OPT_NON_STR_KEYS
_INT64 = 2**63
# Rows joined into one write: a few hundred kilobytes at a time rather than a call per row.
_ROWS_PER_WRITE = 256


def _wide_ints(value: Any) -> Any:
    """`value` with integers orjson cannot hold (beyond 64 bits) as floats, as JSON.parse
    would read them."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value) if not -_INT64 <= value < 2**64 else value
    if isinstance(value, dict):
        return {k: _wide_ints(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_wide_ints(v) for v in value]
    return value


def dumps(value: Any) -> bytes:
    """`value` as indented JSON bytes."""
    try:
        return orjson.dumps(value, default=str, option=_OPTIONS)
    except TypeError:  # a key that is not a string, or an integer beyond 64 bits
        pass
    try:
        return orjson.dumps(value, default=str, option=_ANY_KEYS)
    except TypeError:  # an integer beyond 64 bits
        return orjson.dumps(_wide_ints(value), default=str, option=_ANY_KEYS)


def nested(value: Any, depth: int) -> bytes:
    """`value` as indented JSON for its place `depth` levels down in a document (its
    first line not indented: it follows its key)."""
    return dumps(value).replace(b"\n", b"\n" + b"  " * depth)


def row_fragment(row: dict[str, Any]) -> bytes:
    """A row without its `testIdx`, indented for its place, its closing brace left off."""
    text = dumps(row)
    return _ROW_INDENT + text[:-2].replace(b"\n", b"\n" + _ROW_INDENT)


def finished_row(fragment: bytes, test_idx: int) -> bytes:
    """A row fragment closed with its `testIdx`."""
    return fragment + b',\n        "testIdx": %d\n      }' % test_idx


def write_document(
    out: IO[bytes], head: dict[str, Any], rows: Iterable[bytes], config: bytes | None = None
) -> None:
    """Write the document `head` (whose `results.results` is `ROWS_MARK`) with `rows`;
    `config`, when given, is the serialized `config` (`nested` at depth 1) that the head
    holds `CONFIG_MARK` for."""
    for part in document_parts(head, rows, config):
        out.write(part)


def document_parts(
    head: dict[str, Any], rows: Iterable[bytes], config: bytes | None = None
) -> Iterator[bytes]:
    """`write_document`'s bytes in the order written, a few hundred rows at a time."""
    before, after = dumps(head).split(_MARK_BYTES, 1)
    if config is not None:
        after = after.replace(_CONFIG_MARK_BYTES, config, 1)
    yield before
    opening = b"[\n"
    rows = iter(rows)
    while chunk := list(itertools.islice(rows, _ROWS_PER_WRITE)):
        yield opening + b",\n".join(chunk)
        opening = b",\n"
    yield b"[]" if opening == b"[\n" else b"\n    ]"
    yield after + b"\n"
