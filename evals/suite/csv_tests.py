"""promptfoo's CSV test format: one test per row, `__`-prefixed columns are special.

`__expected`, `__expected1`... hold assertions written as `type:value` (a bare value means
`equals`), `__description`, `__metric`, `__threshold`, `__prefix`, `__suffix`,
`__providerOutput`, `__metadata:key` (`key[]` splits on unescaped commas) and
`__config:__expectedN:threshold`; every other column is a var.
"""

from __future__ import annotations

import csv
import difflib
import functools
import io
import math
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from evals.common.files import read_text
from evals.common.jsvalues import js_trim
from evals.graders import catalog
from evals.graders.base import GraderError
from evals.model.errors import SuiteError
from evals.suite.yaml_lines import LineDict

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# promptfoo 0.121's own assertion types that the harness has no grader for: a cell naming
# one is read as promptfoo reads it, and its row errors as in promptfoo. The types it
# grades say so where they are registered (`@register(..., promptfoo=True)`).
_PROMPTFOO_ONLY_TYPES = (
    "agent-rubric",
    "classifier",
    "conversation-relevance",
    "model-graded-factuality",
    "moderation",
    "pi",
    "search-rubric",
)


def promptfoo_types() -> list[str]:
    """promptfoo 0.121's assertion types (its BaseAssertionTypesSchema), sorted."""
    return sorted({*catalog.promptfoo_types(), *_PROMPTFOO_ONLY_TYPES})


@functools.cache
def _assertion() -> re.Pattern[str]:
    """`[not-]type[(threshold)][:value]` over promptfoo's types. promptfoo takes the first
    type of its list that lets the whole cell match, and lists a type before those it is
    the start of (`similar:cosine:x` is `similar` with the value `cosine:x`); sorted
    order does the same."""
    types = "|".join(map(re.escape, promptfoo_types()))
    return re.compile(rf"(not-)?({types})(?:\(([0-9]+(?:\.[0-9]+)?)\))?(?::([\s\S]*))?")


_JAVASCRIPT_FILE = re.compile(r"\.(?:js|cjs|mjs|ts|cts|mts)\Z", re.IGNORECASE)
_LIST_TYPES = {"contains-all", "contains-any", "icontains-all", "icontains-any"}
_THRESHOLD_TYPES = {
    "answer-relevance",
    "classifier",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "cost",
    "latency",
    "levenshtein",
    "perplexity-score",
    "perplexity",
    "rouge-n",
    "similar",
    "starts-with",
}
_SIMILAR_DEFAULT_THRESHOLD = 0.8
_THRESHOLD_DEFAULT = 0.75
_FIELD_SIZE_LIMIT = 2**31 - 1  # no limit of its own: a cell is as long as the file allows


def parse_finite_number(value: str | None) -> float | None:
    """A number from a CSV cell, or None for blank, non-numeric or overflowing cells."""
    text = js_trim(value or "")
    number = float(text) if _NUMBER.fullmatch(text) else None
    return number if number is not None and math.isfinite(number) else None


def _is_javascript_ref(expected: str) -> bool:
    return expected.startswith("file://") and _JAVASCRIPT_FILE.search(expected[7:]) is not None


def _is_python_ref(expected: str) -> bool:
    return expected.startswith("file://") and (expected.endswith(".py") or ".py:" in expected)


def assertion_from_string(expected: str) -> dict[str, Any]:
    """An assertion from a `__expected` cell, as promptfoo's assertionFromString reads it.

    `javascript:`/`fn:`/`eval:` and `file://` JavaScript files are `javascript`,
    `grade:`/`llm-rubric:` are `llm-rubric`, `python:` and `file://` Python files are
    `python`; then `[not-]type[(threshold)][:value]` for promptfoo's own assertion types;
    anything else is `equals`. A malformed contains-any list raises a GraderError.
    """
    if expected.startswith(("javascript:", "fn:", "eval:")) or _is_javascript_ref(expected):
        cut = 0 if expected.startswith("file://") else expected.index(":") + 1
        return {"type": "javascript", "value": js_trim(expected[cut:])}
    if expected.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": expected.split(":", 1)[1]}
    if expected.startswith("python:") or _is_python_ref(expected):
        return {"type": "python", "value": js_trim(expected[7:])}
    match = _assertion().fullmatch(expected)
    if match is None:
        return {"type": "equals", "value": expected}
    negation, kind, threshold_text, value = match.groups()
    full_type = f"not-{kind}" if negation else kind
    if kind in _LIST_TYPES:
        from evals.graders.output import parse_comma_separated

        return {"type": full_type, "value": parse_comma_separated(value) if value else value}
    if kind in ("contains-json", "is-json"):
        return {"type": full_type, "value": value}
    trimmed = js_trim(value) if value is not None else None
    if kind in _THRESHOLD_TYPES:
        threshold = parse_finite_number(threshold_text)
        if threshold is None:
            threshold = _SIMILAR_DEFAULT_THRESHOLD if kind == "similar" else _THRESHOLD_DEFAULT
        return {"type": full_type, "value": trimmed, "threshold": threshold}
    return {"type": full_type, "value": trimmed}


def _expected_index(key: str, path: Path, line: int) -> int:
    if key == "__expected":
        return 0
    match = re.fullmatch(r"__expected(\d+)", key)
    if match is None or int(match.group(1)) < 1:
        raise SuiteError(
            f"invalid expected key {key!r} in a __config column",
            file=str(path),
            line=line,
            fix="write __config:__expected:threshold or __config:__expectedN:threshold",
        )
    return int(match.group(1)) - 1


def _metadata_list(value: str) -> list[str]:
    return [js_trim(v).replace("\\,", ",") for v in re.split(r"(?<!\\),", value)]


def _cell_assertion(key: str, expected: str, path: Path, line: int) -> dict[str, Any]:
    """The assertion of one `__expected` cell; a malformed list stops the load, as in promptfoo."""
    try:
        return assertion_from_string(expected)
    except GraderError as exc:
        raise SuiteError(
            f"column {key} holds a list promptfoo cannot read ({exc}): {expected[:80]!r}",
            file=str(path),
            line=line,
            fix='close every quote of the list and put a comma after it ("a,b", c); '
            'write a quote inside a quoted item as "" or \\"',
        ) from exc


# promptfoo's special columns; any other column is a var.
SPECIAL_COLUMNS = (
    "__expected",
    "__prefix",
    "__suffix",
    "__description",
    "__providerOutput",
    "__metric",
    "__threshold",
    "__metadata",
    "__config",
)


def _refuse_misspelled_column(key: str, path: Path) -> None:
    """A `__` column that reads as a misspelled special column (`__expeted`) is refused
    with the one it resembles: as a var it would silently drop the assertion or setting.
    Any other column is a var, as in promptfoo."""
    if not key.startswith("__"):
        return
    head = key.split(":", 1)[0]
    close = difflib.get_close_matches(head, SPECIAL_COLUMNS, n=1, cutoff=0.75)
    if close:
        raise SuiteError(
            f"unknown column {key!r}: a var, though it looks like promptfoo's {close[0]!r}",
            file=str(path),
            line=1,
            fix=f"did you mean {close[0] + key[len(head) :]!r}? (rename the column; a var "
            "whose name starts with __ is taken for a misspelled special column)",
        )


def test_from_row(row: dict[str, str], path: Path, line: int) -> dict[str, Any]:
    """One promptfoo test case from a CSV row (header -> cell)."""
    test_vars: dict[str, str] = {}
    asserts: list[dict[str, Any]] = []
    options: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    configs: dict[int, dict[str, float]] = {}
    test: dict[str, Any] = {}
    metric: str | None = None
    for raw_key, value in row.items():
        key = js_trim(raw_key)
        if key.startswith("__expected"):
            if js_trim(value):
                asserts.append(_cell_assertion(key, js_trim(value), path, line))
        elif key in ("__prefix", "__suffix"):
            options[key[2:]] = value
        elif key == "__description":
            if value:
                test["description"] = value
        elif key == "__providerOutput":
            if value:
                test["providerOutput"] = value
        elif key == "__metric":
            metric = value
        elif key == "__threshold":
            threshold = parse_finite_number(value)
            if threshold is None and js_trim(value):
                raise SuiteError(
                    f"column __threshold needs a number, got {value[:80]!r}",
                    file=str(path),
                    line=line,
                    fix="write the pass threshold as a number (0.75), or leave the cell empty",
                )
            if threshold is not None:
                test["threshold"] = threshold
        elif key.startswith("__metadata:"):
            name = key[len("__metadata:") :]
            if js_trim(value) and name.endswith("[]"):
                metadata[name[:-2]] = _metadata_list(value)
            elif js_trim(value):
                metadata[name] = value
        elif key.startswith("__config:"):
            parts = key[len("__config:") :].split(":")
            if len(parts) != 2:
                continue
            index = _expected_index(parts[0], path, line)
            number = parse_finite_number(value)
            if parts[1] != "threshold" or number is None:
                raise SuiteError(
                    f"column {key!r} needs a numeric threshold, got {value!r}",
                    file=str(path),
                    line=line,
                    fix="only threshold is configurable per expected column; write a number",
                )
            configs.setdefault(index, {})["threshold"] = number
        elif key != "__metadata":
            _refuse_misspelled_column(key, path)
            test_vars[key] = value
    for index, assertion in enumerate(asserts):
        assertion["metric"] = metric
        for name, number in configs.get(index, {}).items():
            assertion[name] = number
            metadata[name] = number
    test.update({"vars": test_vars, "assert": asserts, "options": options})
    if metadata:
        test["metadata"] = metadata
    return test


DELIMITER_ENV = "PROMPTFOO_CSV_DELIMITER"
_delimiter: ContextVar[str] = ContextVar("csv_delimiter", default=",")


@contextmanager
def csv_delimiter(env: Mapping[str, str], file: str) -> Iterator[None]:
    """CSV files read inside split cells at the character PROMPTFOO_CSV_DELIMITER names in
    `env`, as promptfoo reads test and prompt CSV files (a semicolon for spreadsheets saved
    in many locales); `,` without it. A delimiter of another length is a SuiteError naming
    `file`."""
    delimiter = env.get(DELIMITER_ENV) or ","
    if len(delimiter) != 1 or delimiter in '\r\n"':
        raise SuiteError(
            f"{DELIMITER_ENV} is {delimiter!r}: CSV cells are split at one character",
            file=file,
            fix=f"set {DELIMITER_ENV} to one character such as ';' or a tab, or unset it",
        )
    token = _delimiter.set(delimiter)
    try:
        yield
    finally:
        _delimiter.reset(token)


def current_delimiter() -> str:
    """The delimiter of the CSV files being read (`csv_delimiter`)."""
    return _delimiter.get()


def _unclosed_quote(text: str, start_line: int) -> bool:
    """Whether the row starting at `start_line` (the file's last) ends inside a quoted cell:
    the lenient reader would take the rest of the file as that cell."""
    tail = "".join(io.StringIO(text, newline="").readlines()[start_line - 1 :])
    try:
        for _ in csv.reader(io.StringIO(tail, newline=""), strict=True, delimiter=_delimiter.get()):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def read_csv_tests(path: Path) -> list[dict[str, Any]]:
    """Every row of a CSV test file as a test (a LineDict at the row's first line).

    A ragged row, or a quote left open at the end of the file, is a SuiteError at its line.
    Cells have no size limit of their own (the csv module's default is 128 kB).
    """
    text = read_text(path, "the tests file", keep_line_endings=True)
    csv.field_size_limit(max(csv.field_size_limit(), _FIELD_SIZE_LIMIT))
    # rows end at \n, \r\n or \r, as csv-parse reads them; a quoted cell keeps its own
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter.get())
    header = next(reader, None)
    if not header:
        return []
    tests: list[dict[str, Any]] = []
    start = last = reader.line_num + 1
    for cells in reader:
        line, start = start, reader.line_num + 1
        if not cells or (len(cells) == 1 and not cells[0].strip() and len(header) > 1):
            continue
        if len(cells) != len(header):
            raise SuiteError(
                f"CSV row has {len(cells)} cells but the header has {len(header)} columns",
                file=str(path),
                line=line,
                fix='quote cells that contain commas ("contains-any:a,b") or add the missing cells',
            )
        test = LineDict(test_from_row(dict(zip(header, cells, strict=True)), path, line))
        test.line, test.key_lines = line, {}
        tests.append(test)
        last = line
    if tests and _unclosed_quote(text, last):
        raise SuiteError(
            "a quote opened in this row is never closed: the rest of the file would be one cell",
            file=str(path),
            line=last,
            fix='close the quote, and write a quote inside a quoted cell as two ("")',
        )
    return tests
