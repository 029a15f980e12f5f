"""The one CSV writer: every CSV evals writes opens in a spreadsheet as text, never as code.

A spreadsheet runs a cell as a formula when its text starts with `=`, `+`, `-` or `@`
(OWASP's CSV injection, CWE-1236), also after leading blanks or zero-width characters,
and a leading tab or carriage return can smuggle one in. Agent output, test data and
dataset column names are untrusted, so every cell and every header passes `formula_safe`,
which prefixes such text with `'` (promptfoo's export does the same to cells); a signed
number (`-1.5`, `+3`) stays a number. The CLI's `.csv` report and the dashboard's
downloads all write through `csv_text`.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

_FORMULA_START = re.compile(r"^[\s\u200b\u200c\u200d\ufeff]*([=@+-])")
_CONTROL_START = ("\t", "\r")


def formula_safe(value: str) -> str:
    """`value` as text a spreadsheet shows and never runs: a formula start (after any
    blank or zero-width character), or a leading tab or carriage return, is prefixed with
    `'`; a signed finite number is left as it is."""
    if value.startswith(_CONTROL_START):
        return "'" + value
    match = _FORMULA_START.match(value)
    if not match:
        return value
    rest = value.lstrip(" \t\r\n\u200b\u200c\u200d\ufeff")
    if match.group(1) in "+-":
        try:
            if math.isfinite(float(rest)):
                return value
        except ValueError:
            pass
    return "'" + value


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, str):
        return formula_safe(value)
    if isinstance(value, bool | int | float):
        return value
    return formula_safe(str(value))


def csv_lines(header: Iterable[Any], rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """A CSV document as RFC 4180 writes one (CRLF line ends; a cell holding a comma, a
    quote or any line break quoted, so a carriage return in a cell cannot start a row of
    its own) whose header and cells are all formula-safe; None and NaN are empty cells,
    numbers stay numbers. Yielded a row at a time, so a table of a million rows is never
    held whole."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in itertools.chain([header], rows):
        writer.writerow([_cell(value) for value in row])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def csv_text(header: Iterable[Any], rows: Iterable[Iterable[Any]]) -> str:
    """`csv_lines` as one text."""
    return "".join(csv_lines(header, rows))
