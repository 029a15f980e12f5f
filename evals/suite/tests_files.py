"""Tests kept outside the suite file: YAML, JSON, JSONL and CSV files, globs, generators.

`tests:` may be one reference or a list mixing references and inline tests; a reference
is a path or glob (`file://cases/*.yaml`), a Python generator `file://gen.py:fn`
(default function `generate_tests`) returning a list of tests, or a JavaScript (or
TypeScript) file `file://gen.js[:fn]` exporting the tests or a function returning them;
`{path, config}` calls the generator with `config`, as promptfoo does.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.common.files import is_python_ref, load_function, read_text, split_ref
from evals.common.interrupts import watch_sigint
from evals.common.jsfiles import JS_FILES
from evals.common.paths import glob_paths, inside, resolve
from evals.model.errors import SuiteError
from evals.suite.csv_tests import read_csv_tests
from evals.suite.external import load_external
from evals.suite.refs import dereference_file
from evals.suite.yaml_lines import (
    file_of,
    keep_lines,
    kind_name,
    line_of,
    load_yaml,
    mark_origin,
)

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


def _javascript_tests(
    ref: str, resolve_files: ResolveFiles, node: Any, config: Any = None
) -> list[Any]:
    """The tests of a JavaScript (or TypeScript) tests file, run in the sandbox as promptfoo
    runs it: its function (the named export, else the module) called with the entry's
    `config`, or its export as it is. A file that throws or gives no list stops the suite,
    as it stops promptfoo."""
    from evals.common.jsengine import JavaScriptError
    from evals.common.jsfiles import ModuleFileMissing, call_tests, error_text

    path_text, fn_name = split_ref(ref)
    (path,) = resolve_files("file://" + path_text, node, "tests file")
    try:
        tests = call_tests(path, fn_name, [] if config is None else [config])
    except (JavaScriptError, ModuleFileMissing) as exc:
        raise SuiteError(
            f"the tests file does not run: {error_text(exc)}",
            file=str(path),
            fix="export a function returning a list of tests: "
            "module.exports = () => [{vars: {...}, assert: [...]}]",
        ) from None
    if not isinstance(tests, list) or not tests:
        raise SuiteError(
            f"the tests file gives {kind_name(tests)}, not a list of tests",
            file=str(path),
            fix="return a list of test mappings ({vars: ..., assert: [...]})",
        )
    return [mark_origin(test, str(path)) if isinstance(test, dict) else test for test in tests]


def _long_number(text: str) -> re.Match[str] | None:
    """The first integer in JSON `text` too long for Python to read, with its key if any."""
    limit = sys.get_int_max_str_digits() or 4300
    key = r'(?:"((?:[^"\\\n]|\\.)*)"\s*:\s*)?'
    return re.search(key + rf"-?(\d{{{limit + 1},}})", text)


def json_error(exc: ValueError, text: str, path: Path, first_line: int = 1) -> SuiteError:
    """A JSON parse failure of `text` (starting at `first_line` of `path`) as a SuiteError
    at the line of the fault; an integer too long to read names its key."""
    if isinstance(exc, json.JSONDecodeError):
        return SuiteError(
            f"invalid JSON: {exc.msg} (column {exc.colno})",
            file=str(path),
            line=first_line + exc.lineno - 1,
            fix="correct the JSON at that line (quote keys and strings, no trailing commas)",
        )
    found = _long_number(text)
    if found is None:
        return SuiteError(
            f"invalid JSON: {exc}", file=str(path), line=first_line, fix="correct the JSON"
        )
    key = "" if found.group(1) is None else f" under {found.group(1)!r}"
    return SuiteError(
        f"the integer{key} has {len(found.group(2))} digits, more than a number may have",
        file=str(path),
        line=first_line + text.count("\n", 0, found.start()),
        fix="write the value as a string (in quotes) if it is an identifier",
    )


def _json(text: str, path: Path, line: int | None = None) -> Any:
    """One JSON document of a tests file (starting at `line`); invalid or too deeply nested
    JSON is a SuiteError at the line of the fault."""
    try:
        return json.loads(text)
    except RecursionError:
        raise SuiteError(
            "JSON nested too deep to read",
            file=str(path),
            line=line,
            fix="nest the values less deeply",
        ) from None
    except ValueError as exc:
        raise json_error(exc, text, path, line or 1) from None


_SPACE = re.compile(r"[ \t\n\r]*")


def _past_space(text: str, index: int) -> int:
    """The index of the first character at or after `index` that is not JSON whitespace."""
    match = _SPACE.match(text, index)
    return match.end() if match else index


def _item_lines(text: str) -> list[int]:
    """The line each item of a JSON array starts on, `text` being valid JSON whose top
    level is that array (read again item by item: json.loads keeps no positions)."""
    decoder = json.JSONDecoder()
    lines = []
    index = _past_space(text, _past_space(text, 0) + 1)  # past '['
    line, counted = 1, 0
    while text[index] != "]":
        line += text.count("\n", counted, index)
        counted = index
        lines.append(line)
        _, end = decoder.raw_decode(text, index)
        index = _past_space(text, end)
        if text[index] == ",":
            index = _past_space(text, index + 1)
    return lines


def _json_lines(path: Path) -> list[Any]:
    tests = []
    for number, line in enumerate(read_text(path, "the tests file").splitlines(), start=1):
        if not line.strip():
            continue
        test = _json(line, path, number)
        if not isinstance(test, dict):
            raise SuiteError(
                f"each line must be a test object (a JSON mapping), not {kind_name(test)}",
                file=str(path),
                line=number,
                fix='write one test per line: {"vars": {...}, "assert": [...]}',
            )
        tests.append(mark_origin(test, str(path), number))
    return tests


def tests_in_file(path: Path, root: Path) -> list[Any]:
    """The tests a single file holds, by extension; a lone mapping counts as one test.
    `root` is the suite's folder, which the file's `$ref`s may read from.

    Every test is a mapping that names the file it came from (and its line when the
    format gives one), so errors about it point into the file, not the suite.
    """
    if path.suffix == ".csv":
        return [mark_origin(test, str(path)) for test in read_csv_tests(path)]
    if path.suffix == ".jsonl":
        tests: list[Any] = dereference_file(_json_lines(path), path, root)
        return tests
    lines: list[int] = []
    if path.suffix == ".json":
        text = read_text(path, "the tests file")
        loaded = _json(text, path)
        if isinstance(loaded, list):
            lines = _item_lines(text)
            # each row knows its line before its references are followed
            loaded = [
                mark_origin(test, str(path), at) for test, at in zip(loaded, lines, strict=True)
            ]
    elif path.suffix in (".yaml", ".yml"):
        loaded = load_yaml(path, "the tests file")
    else:
        raise SuiteError(
            f"unsupported tests file type {path.suffix!r}",
            file=str(path),
            fix="use .yaml, .yml, .json, .jsonl, .csv or a Python generator file://gen.py:fn",
        )
    loaded = dereference_file(loaded, path, root)
    if isinstance(loaded, dict):
        loaded = [loaded]
    if not isinstance(loaded, list):
        raise SuiteError(
            "a tests file must hold a list of tests",
            file=str(path),
            fix="make the top level a list ('- vars: ...')",
        )
    for number, test in enumerate(loaded, start=1):
        if not isinstance(test, dict):
            raise SuiteError(
                f"test #{number} must be a mapping, not {kind_name(test)}",
                file=str(path),
                line=lines[number - 1] if lines else line_of(test),
                fix="each test is a mapping with vars: and assert:",
            )
    if lines:
        return [mark_origin(test, str(path), at) for test, at in zip(loaded, lines, strict=True)]
    return [mark_origin(test, str(path)) for test in loaded]


def _described(tests: list[Any]) -> list[Any]:
    """Tests without a description named `Row #N`, as promptfoo names the rows of a CSV
    file and of a JSON or JSONL file that `tests:` names on its own."""
    for number, test in enumerate(tests, start=1):
        if not test.get("description"):
            test["description"] = f"Row #{number}"
    return tests


def _as_listed(path: Path, tests: list[Any], root: Path) -> list[Any]:
    """Tests of a YAML file, or of a JSON or JSONL file in a `tests:` list, as promptfoo's
    loadTestsFromGlob reads them: `file://` references in them loaded (`external`), and
    a test's `vars` naming files read from them (relative to the file's folder)."""
    allowed = (resolve(root), resolve(path).parent)
    loaded = load_external(tests, root, allowed)
    return [with_vars_files(test, path.parent, root, allowed) for test in loaded]


def read_test_ref(
    ref: str,
    resolve_files: ResolveFiles,
    node: Any,
    root: Path,
    config: Any = None,
    alone: bool = False,
) -> list[Any]:
    """The tests a `tests:` reference stands for, in file order then glob order; `root`
    is the suite's folder. `alone`: the reference is the whole `tests:` value (a CSV, JSON
    or JSONL file's rows are then named `Row #N` and read as rows, as promptfoo's
    readStandaloneTestsFile reads them); in a list, only a CSV file is."""
    if split_ref(ref)[0].endswith(JS_FILES):
        return _javascript_tests(ref, resolve_files, node, config)
    if is_generator_ref(ref):
        return _generated_tests(ref, resolve_files, node, config)
    tests: list[Any] = []
    for path in resolve_files(ref, node, "tests"):
        found = tests_in_file(path, root)
        if not found:
            raise SuiteError(
                "the tests file holds no test",
                file=str(path),
                fix="add a test to the file (a CSV needs a row under its header), "
                "or remove it from tests:",
            )
        if path.suffix == ".csv" or (alone and path.suffix in (".json", ".jsonl")):
            tests.extend(_described(found))
        else:
            tests.extend(_as_listed(path, found, root))
    return tests


def test_entries(value: Any, resolve_files: ResolveFiles, node: Any, root: Path) -> list[Any]:
    """Every test of a `tests:` value, with references expanded; None means one empty test.
    `root` is the suite's folder; a test's `vars` naming files is read from them."""
    if value is None:
        return [{}]
    if isinstance(value, str):
        return read_test_ref(value, resolve_files, node, root, alone=True)
    items = value if isinstance(value, list) else [value]
    entries: list[Any] = []
    for item in items:
        if isinstance(item, str):
            entries.extend(read_test_ref(item, resolve_files, node, root))
        elif isinstance(item, dict) and isinstance(item.get("path"), str) and "vars" not in item:
            path = item["path"]
            entries.extend(
                read_test_ref(path, resolve_files, item, root, item.get("config"), alone=True)
            )
        else:
            entries.append(with_vars_files(item, root, root))
    return entries


def with_vars_files(
    test: Any, base: Path, root: Path, allowed: tuple[Path, ...] | None = None
) -> Any:
    """A test whose `vars` names files (a path, a glob, or a list of them, relative to
    `base`) with the vars read from them, as promptfoo's readTestFiles reads them: each
    YAML or JSON file a mapping, merged in order, its `file://` references loaded
    (relative to the suite's folder `root`). A path
    written with `file://` matches no file there: promptfoo then gives the test no vars.
    With `allowed` (a dataset's test), the files must lie inside those folders."""
    if not isinstance(test, dict):
        return test
    value = test.get("vars")
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return test
    merged: dict[str, Any] = {}
    for name in names:
        try:
            paths = [p for p in glob_paths(name, base) if p.is_file()]
        except ValueError:
            paths = []
        for path in paths:
            if allowed is not None and not inside(resolve(path), allowed):
                raise SuiteError(
                    f"the test's vars name {path}, outside the suite's folder: a dataset may "
                    "only name files inside the suite's or its own folder",
                    file=file_of(test),
                    line=line_of(test, "vars") or line_of(test),
                    fix="copy the file next to the suite and name it relative to the suite",
                )
            data = load_yaml(path, "the vars file")
            if isinstance(data, dict):
                merged.update(load_external(data, root, allowed))
    rebuilt = type(test)(test)
    rebuilt["vars"] = merged
    rebuilt_with_lines: Any = keep_lines(test, rebuilt)
    return rebuilt_with_lines


def scenario_entries(value: Any, resolve_files: ResolveFiles, node: Any, root: Path) -> Any:
    """`scenarios:` with its files read, as promptfoo reads them: the value, or an entry of
    it, may be `file://` a YAML or JSON file (or glob) holding scenarios (lists are
    flattened); a scenario's `tests:` may be such a file holding tests, and each of its
    tests may be a test file (glob) or a test whose vars name files. Anything else is
    returned as it is, for the loader's shape checks."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return value
    scenarios: list[Any] = []
    for entry in value:
        loaded = _referenced(entry, resolve_files, node, "scenarios")
        for scenario in loaded if isinstance(loaded, list) else [loaded]:
            scenarios.append(_scenario_tests(scenario, resolve_files, root))
    return scenarios


def _referenced(value: Any, resolve_files: ResolveFiles, node: Any, what: str) -> Any:
    """A `file://` YAML or JSON file (or glob) read: the items of every match, in order (a
    file holding one mapping gives that one); anything else as it is."""
    if not (isinstance(value, str) and value.startswith("file://")):
        return value
    out: list[Any] = []
    for path in resolve_files(value, node, what):
        data = load_yaml(path, f"the {what} file")
        out.extend(data if isinstance(data, list) else [data])
    return out


def _scenario_tests(scenario: Any, resolve_files: ResolveFiles, root: Path) -> Any:
    if not isinstance(scenario, dict) or "tests" not in scenario:
        return scenario
    tests = _referenced(scenario["tests"], resolve_files, scenario, "scenario tests")
    if not isinstance(tests, list):
        return scenario
    entries: list[Any] = []
    for test in tests:
        if isinstance(test, str):
            entries.extend(read_test_ref(test, resolve_files, scenario, root))
        else:
            entries.append(with_vars_files(test, root, root))
    rebuilt = type(scenario)(scenario)
    rebuilt["tests"] = entries
    kept: Any = keep_lines(scenario, rebuilt)
    return kept
