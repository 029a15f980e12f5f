"""`file://` references inside data files, loaded as promptfoo's
maybeLoadConfigFromExternalFile loads them when it reads the file.

A string `file://x.json` (or `.yaml`) anywhere in the data becomes the parsed file, a
`.csv` its rows (the values of its one column, or a mapping per row), anything else the
file's text as written (untrimmed); a glob becomes every match's content, concatenated.
What stays a reference: anything under a `vars` key (vars load their files when the
prompt renders), a Python or JavaScript file an assertion of type `python` or
`javascript` names, and any `file://x.py:fn` or `x.js:fn`. Paths are relative to the
suite's folder, whichever file holds them, as in promptfoo. Data (a dataset's tests) may
only name files inside the folders it is given (the suite's and its own): it cannot make
the harness read other files of the host.
"""

from __future__ import annotations

import csv
import glob
import io
import json
from pathlib import Path
from typing import Any

from evals.common.files import FILE_PREFIX, read_text, split_ref
from evals.common.jsfiles import JS_FILES
from evals.common.paths import LinkLoop, glob_base, glob_paths, inside, resolve
from evals.common.yaml12 import load_yaml_text
from evals.model.errors import SuiteError
from evals.suite.yaml_lines import keep_lines

_CODE = (".py", *JS_FILES)


def load_external(
    value: Any,
    root: Path,
    allowed: tuple[Path, ...] | None = None,
    context: str | None = None,
) -> Any:
    """`value` with its `file://` references loaded (see the module's docstring); with
    `allowed`, a reference resolving outside those folders is a SuiteError."""
    if isinstance(value, list):
        return [load_external(item, root, allowed, context) for item in value]
    if isinstance(value, dict):
        loaded = type(value)(value)
        for key, item in value.items():
            inner = context
            if key == "vars":
                inner = "vars"
            elif key == "value" and value.get("type") in ("python", "javascript"):
                inner = "assertion"
            loaded[key] = load_external(item, root, allowed, inner)
        return keep_lines(value, loaded)
    if not isinstance(value, str) or not value.startswith(FILE_PREFIX):
        return value
    path_text, function = split_ref(value)
    code = path_text.endswith(_CODE)
    if context == "vars" or (code and (context == "assertion" or function)):
        return value
    return _file_contents(value[len(FILE_PREFIX) :] if function else path_text, root, allowed)


def _contained(path: Path, allowed: tuple[Path, ...] | None) -> Path:
    try:
        resolved = resolve(path)
    except LinkLoop:
        raise SuiteError(f"{path} is a loop of symbolic links") from None
    if allowed is not None and not inside(resolved, allowed):
        raise SuiteError(
            f"{path} is outside the suite's folder: a dataset may only name files inside "
            "the suite's or its own folder",
            fix="copy the file next to the suite and name it relative to the suite",
        )
    return resolved


def _file_contents(path_text: str, root: Path, allowed: tuple[Path, ...] | None) -> Any:
    if glob.has_magic(path_text):
        _contained(glob_base(path_text, root), allowed)
        matches = [_contained(p, allowed) for p in glob_paths(path_text, root) if p.is_file()]
        if not matches:
            raise SuiteError(
                f"No files found matching pattern: {root / path_text}",
                fix="correct the glob (relative to the suite's folder) or add matching files",
            )
        out: list[Any] = []
        for match in matches:
            contents = _parsed(match)
            if match.suffix in (".json", ".yaml", ".yml", ".csv") and isinstance(contents, list):
                out.extend(contents)
            elif contents is not None or match.suffix not in (".yaml", ".yml"):
                out.append(contents)
        return out
    path = _contained(root / path_text, allowed)
    if not path.is_file():
        raise SuiteError(f"File does not exist: {path}", fix="correct the path or add the file")
    return _parsed(path)


def _parsed(path: Path) -> Any:
    text = read_text(path, "the referenced file", keep_line_endings=True)
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except ValueError as exc:
            raise SuiteError(f"Failed to parse JSON file {path}: {exc}", file=str(path)) from None
    if path.suffix in (".yaml", ".yml"):
        return load_yaml_text(text)
    if path.suffix == ".csv":
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        if rows and len(rows[0]) == 1:
            return [next(iter(row.values())) for row in rows]
        return rows
    return text
