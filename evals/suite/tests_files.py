"""Tests kept outside the suite file: YAML, JSON, JSONL and CSV files, globs, generators.

`tests:` may be one reference or a list mixing references and inline tests; a reference
is a path or glob (`file://cases/*.yaml`), or a Python generator `file://gen.py:fn`
(default function `generate_tests`) returning a list of tests; `{path, config}` calls the
generator with `config`, as promptfoo does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.common.files import is_python_ref, load_function, split_ref
from evals.common.interrupts import watch_sigint
from evals.model.errors import SuiteError
from evals.suite.csv_tests import read_csv_tests
from evals.suite.yaml_lines import load_yaml

ResolveFiles = Callable[[str, Any, str], list[Path]]


def is_generator_ref(ref: str) -> bool:
    """True for a Python test generator reference (`file://gen.py` or `file://gen.py:fn`)."""
    return is_python_ref(ref)


def _generated_tests(
    ref: str, resolve_files: ResolveFiles, node: Any, config: Any = None
) -> list[Any]:

    path_text, fn_name = split_ref(ref)
    path_text = path_text if path_text.endswith(".py") else path_text + ".py"
    (path,) = resolve_files("file://" + path_text, node, "tests generator")
    generator = load_function(path, fn_name or "generate_tests", "tests generator")
    try:
        with watch_sigint() as sigint:
            tests = generator() if config is None else generator(config)
    except BaseException as exc:  # SystemExit or KeyboardInterrupt too: the generator's fault
        if sigint.received:  # Ctrl-C of the harness while generating: an interruption
            raise
        raise SuiteError(
            f"the tests generator raised {type(exc).__name__}: {exc}",
            file=str(path),
            fix=f"call {generator.__name__}() on its own to see the full error",
        ) from None
    if not isinstance(tests, list):
        raise SuiteError(
            f"the tests generator returned {type(tests).__name__}, not a list",
            file=str(path),
            fix="return a list of test mappings ({'vars': ..., 'assert': [...]})",
        )
    if not tests:
        raise SuiteError(
            "the tests generator returned no test",
            file=str(path),
            fix="return at least one test mapping ({'vars': ..., 'assert': [...]})",
        )
    return tests


def _json_lines(path: Path) -> list[Any]:
    tests = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            tests.append(json.loads(line))
        except ValueError as exc:
            raise SuiteError(
                f"invalid JSON on this line: {exc}", file=str(path), line=number
            ) from None
    return tests


def tests_in_file(path: Path) -> list[Any]:
    """The tests a single file holds, by extension; a lone mapping counts as one test."""
    if path.suffix == ".csv":
        return read_csv_tests(path)
    if path.suffix == ".jsonl":
        return _json_lines(path)
    if path.suffix == ".json":
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SuiteError(f"invalid JSON: {exc}", file=str(path)) from None
    elif path.suffix in (".yaml", ".yml"):
        loaded = load_yaml(path)
    else:
        raise SuiteError(
            f"unsupported tests file type {path.suffix!r}",
            file=str(path),
            fix="use .yaml, .yml, .json, .jsonl, .csv or a Python generator file://gen.py:fn",
        )
    if isinstance(loaded, dict):
        return [loaded]
    if not isinstance(loaded, list):
        raise SuiteError(
            "a tests file must hold a list of tests",
            file=str(path),
            fix="make the top level a list ('- vars: ...')",
        )
    return loaded


def _csv_descriptions(path: Path, tests: list[Any]) -> list[Any]:
    if path.suffix == ".csv":
        for number, test in enumerate(tests, start=1):
            test.setdefault("description", f"Row #{number}")
    return tests


def read_test_ref(
    ref: str, resolve_files: ResolveFiles, node: Any, config: Any = None
) -> list[Any]:
    """The tests a `tests:` reference stands for, in file order then glob order."""
    if is_generator_ref(ref):
        return _generated_tests(ref, resolve_files, node, config)
    tests: list[Any] = []
    for path in resolve_files(ref, node, "tests"):
        found = tests_in_file(path)
        if not found:
            raise SuiteError(
                "the tests file holds no test",
                file=str(path),
                fix="add a test to the file (a CSV needs a row under its header), "
                "or remove it from tests:",
            )
        tests.extend(_csv_descriptions(path, found))
    return tests


def test_entries(value: Any, resolve_files: ResolveFiles, node: Any) -> list[Any]:
    """Every test of a `tests:` value, with references expanded; None means one empty test."""
    if value is None:
        return [{}]
    items = value if isinstance(value, list) else [value]
    entries: list[Any] = []
    for item in items:
        if isinstance(item, str):
            entries.extend(read_test_ref(item, resolve_files, node))
        elif isinstance(item, dict) and isinstance(item.get("path"), str) and "vars" not in item:
            entries.extend(read_test_ref(item["path"], resolve_files, item, item.get("config")))
        else:
            entries.append(item)
    return entries
