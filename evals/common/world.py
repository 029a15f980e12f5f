"""The world an agent's tools read and change: a state file, its changes and its digest.

A suite may declare an environment (`environment: {state: file://seed.sqlite}`): each run
gets a fresh copy of the seed, the agent's tools read and change it, and graders judge
what the run left behind, as tau-bench judges a task by the final state of its database.

A state is read as one JSON document: a JSON or YAML file as it is; a SQLite database
(`.sqlite`, `.sqlite3`, `.db`, or a `.sql` script that builds one) as
`{table: {key: {column: value}}}`, each row under its primary key (the values joined by
`|` for a composite key, the rowid without one), so a changed row is one changed mapping.

A change is `{"path": "orders.A100.status", "before": ..., "after": ...}`; a value that
appeared has no `before`, one that disappeared no `after`. A path's segments are joined
by `.`; a `.` or `\\` inside a segment is escaped with `\\`. Patterns match paths segment
by segment (`*` and `?` inside a segment, `**` for any number of segments).
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
SQL_SUFFIX = ".sql"
DOCUMENT_SUFFIXES = (".json", ".yaml", ".yml")
STATE_SUFFIXES = (*SQLITE_SUFFIXES, SQL_SUFFIX, *DOCUMENT_SUFFIXES)

Path_ = tuple[str, ...]


class WorldError(ValueError):
    """A state file that cannot be read, or changes that cannot be applied to it."""


def is_database(path: Path) -> bool:
    """True when the state at `path` is (or is built as) a SQLite database."""
    return path.suffix.lower() in (*SQLITE_SUFFIXES, SQL_SUFFIX)


def state_file_name(seed: Path) -> str:
    """The name of a run's copy of the seed: a `.sql` script becomes `state.sqlite`."""
    suffix = seed.suffix.lower()
    return "state.sqlite" if suffix == SQL_SUFFIX else f"state{suffix}"


def copy_seed(seed: Path, folder: Path) -> Path:
    """A fresh copy of the seed state in `folder`, built from the script for a `.sql` seed."""
    target = folder / state_file_name(seed)
    if seed.suffix.lower() == SQL_SUFFIX:
        connection = sqlite3.connect(target)
        try:
            connection.executescript(seed.read_text(encoding="utf-8"))
            connection.commit()
        except sqlite3.Error as exc:
            raise WorldError(f"{seed.name}: the SQL script failed: {exc}") from None
        finally:
            connection.close()
    else:
        shutil.copyfile(seed, target)
    return target


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def _primary_key(connection: sqlite3.Connection, table: str) -> list[str]:
    columns = connection.execute(f'PRAGMA table_info("{table}")').fetchall()
    keyed = sorted((c[5], c[1]) for c in columns if c[5])
    return [name for _, name in keyed]


def _tables(connection: sqlite3.Connection) -> list[str]:
    rows = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name"
    ).fetchall()
    return [str(row[0]) for row in rows]


def _row_key(row: dict[str, Any], key: list[str], rowid: Any) -> str:
    if not key:
        return str(rowid)
    return "|".join(str(row[name]) for name in key)


def read_database(path: Path) -> dict[str, Any]:
    """A SQLite database as `{table: {key: {column: value}}}`."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise WorldError(f"{path.name}: not a readable SQLite database: {exc}") from None
    try:
        state: dict[str, Any] = {}
        for table in _tables(connection):
            key = _primary_key(connection, table)
            cursor = connection.execute(f'SELECT rowid AS "__rowid__", * FROM "{table}"')
            names = [d[0] for d in cursor.description]
            rows: dict[str, Any] = {}
            for values in cursor:
                row = {n: _cell(v) for n, v in zip(names[1:], values[1:], strict=True)}
                rows[_row_key(row, key, values[0])] = row
            state[table] = rows
        return state
    except sqlite3.Error as exc:
        raise WorldError(f"{path.name}: cannot read the database: {exc}") from None
    finally:
        connection.close()


def read_state(path: Path) -> Any:
    """The state at `path` as one JSON document (see the module's docstring)."""
    if is_database(path):
        return read_database(path)
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        from evals.common.yaml12 import load_yaml_text

        return load_yaml_text(text)
    except ValueError as exc:
        raise WorldError(f"{path.name}: the state does not parse: {exc}") from None


def canonical(state: Any) -> bytes:
    """The state as canonical JSON (sorted keys, no spaces): what its digest is taken over."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def digest(state: Any) -> str:
    """16 hex digits of SHA-256 over the canonical JSON of a state."""
    return hashlib.sha256(canonical(state)).hexdigest()[:16]


def _escape(segment: str) -> str:
    return segment.replace("\\", "\\\\").replace(".", "\\.")


def format_path(path: Sequence[str]) -> str:
    """Segments as one dotted path, dots and backslashes inside a segment escaped."""
    return ".".join(_escape(s) for s in path)


def parse_path(text: str) -> Path_:
    """A dotted path (or pattern) as its segments; `\\.` is a dot inside a segment."""
    segments: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ".":
            segments.append("".join(current))
            current = []
        else:
            current.append(char)
    segments.append("".join(current))
    return tuple(segments)


def path_matches(pattern: Sequence[str], path: Sequence[str]) -> bool:
    """True when the path matches the pattern's segments (`*`, `?` and `**`), or lies
    below a path the pattern matches (a pattern naming a row covers its columns)."""
    if not pattern:
        return True
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(path_matches(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and fnmatch.fnmatchcase(path[0], head) and path_matches(rest, path[1:])


_ABSENT = object()


def _changes(before: Any, after: Any, path: Path_) -> Iterator[dict[str, Any]]:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*before, *(k for k in after if k not in before)]:
            yield from _changes(
                before.get(key, _ABSENT), after.get(key, _ABSENT), (*path, str(key))
            )
        return
    if before is _ABSENT and after is _ABSENT:
        return
    if before is not _ABSENT and after is not _ABSENT and canonical(before) == canonical(after):
        return
    change: dict[str, Any] = {"path": format_path(path)}
    if before is not _ABSENT:
        change["before"] = before
    if after is not _ABSENT:
        change["after"] = after
    yield change


def diff(before: Any, after: Any) -> list[dict[str, Any]]:
    """Every change from one state to another: mappings are compared key by key, anything
    else (lists included) as a whole value."""
    return list(_changes(before, after, ()))


def apply_to_document(state: Any, changes: Iterable[dict[str, Any]]) -> Any:
    """The document after `changes` (as `diff` gives them); `state` is left as it was."""
    document = json.loads(json.dumps(state))
    for change in changes:
        path = parse_path(change["path"])
        if not path or path == ("",):
            document = change.get("after")
            continue
        parent = document
        for segment in path[:-1]:
            if not isinstance(parent, dict):
                raise WorldError(f"cannot apply a change at {change['path']}")
            parent = parent.setdefault(segment, {})
        if not isinstance(parent, dict):
            raise WorldError(f"cannot apply a change at {change['path']}")
        if "after" in change:
            parent[path[-1]] = change["after"]
        else:
            parent.pop(path[-1], None)
    return document


def _where(connection: sqlite3.Connection, table: str, key: str) -> tuple[str, list[Any]]:
    columns = _primary_key(connection, table)
    if not columns:
        return "rowid = ?", [int(key)]
    parts = key.split("|") if len(columns) > 1 else [key]
    clause = " AND ".join(f'CAST("{c}" AS TEXT) = ?' for c in columns)
    return clause, parts


def _apply_row(connection: sqlite3.Connection, change: dict[str, Any]) -> None:
    path = parse_path(change["path"])
    if len(path) == 2:
        table, key = path
        clause, params = _where(connection, table, key)
        connection.execute(f'DELETE FROM "{table}" WHERE {clause}', params)
        row = change.get("after")
        if isinstance(row, dict):
            names = ", ".join(f'"{n}"' for n in row)
            marks = ", ".join("?" for _ in row)
            connection.execute(
                f'INSERT INTO "{table}" ({names}) VALUES ({marks})', list(row.values())
            )
        return
    if len(path) == 3:
        table, key, column = path
        clause, params = _where(connection, table, key)
        connection.execute(
            f'UPDATE "{table}" SET "{column}" = ? WHERE {clause}', [change.get("after"), *params]
        )
        return
    raise WorldError(f"a database change names a table, a row and a column: {change['path']}")


def apply_changes(path: Path, changes: Sequence[dict[str, Any]]) -> None:
    """Make the state at `path` what it would be after `changes` (replaying a call the
    response cache answered, whose tools did not run this time)."""
    if not changes:
        return
    if is_database(path):
        connection = sqlite3.connect(path)
        try:
            for change in changes:
                _apply_row(connection, change)
            connection.commit()
        except sqlite3.Error as exc:
            raise WorldError(f"{path.name}: cannot replay the changes: {exc}") from None
        finally:
            connection.close()
        return
    document = apply_to_document(read_state(path), changes)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8")
    else:
        import yaml

        path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
