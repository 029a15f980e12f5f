"""Machine-readable reports: promptfoo JSON and YAML, JSON Lines and promptfoo's CSV table."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

import yaml

from evals.common.spreadsheet import csv_lines
from evals.model.evaluation import EvaluationResult
from evals.reports.json_document import ROWS_MARK, document_parts, finished_row, row_fragment
from evals.reports.promptfoo_format import (
    column_metrics,
    columns,
    document_head,
    duration_ms,
    iter_rows,
)
from evals.reports.promptfoo_row import ERROR_FAILURE, PASS, fill_head


def jsonable(value: Any) -> Any:
    """`value` with tuples as lists, non-finite floats as null and unknown objects as text.

    promptfoo and browsers parse with JSON.parse, which rejects NaN and Infinity.
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def render_json(result: EvaluationResult) -> str:
    """promptfoo's output file (results version 3) with the `evals` key added."""
    return "".join(json_parts(result))


def json_parts(result: EvaluationResult) -> Iterator[str]:
    """`render_json` written a few hundred rows at a time: the runs are read twice, once
    for the columns' metrics that come before the rows, so no report holds them all."""
    head = document_head(result, ROWS_MARK)
    fill_head(head, column_metrics(result), duration_ms(result))
    rows = (_finished(row) for row in iter_rows(result))
    for part in document_parts(head, rows):
        yield part.decode("utf-8")


def _finished(row: dict[str, Any]) -> bytes:
    """A row serialized once, its `testIdx` last (taken out first, so it is not twice)."""
    test_idx = row.pop("testIdx")
    return finished_row(row_fragment(row), test_idx)


def render_yaml(result: EvaluationResult) -> Iterator[str]:
    """The same document as the JSON report, in YAML, as promptfoo's `-o out.yaml` writes,
    a row at a time: the document around the rows is dumped once, then each row as an item
    of `results.results` (the runs read twice, once for the columns' metrics)."""
    head = document_head(result, ROWS_MARK)
    fill_head(head, column_metrics(result), duration_ms(result))
    before, after = _yaml(jsonable(head)).split(_YAML_ROWS_LINE, 1)
    yield before
    empty = True
    for row in iter_rows(result):
        if empty:
            yield "  results:\n"
            empty = False
        yield _indented(_yaml([jsonable(row)]), "  ")
    if empty:
        yield "  results: []\n"
    yield after


_YAML_ROWS_LINE = '  results: "\\0rows\\0"\n'


def _yaml(value: Any) -> str:
    # libyaml's emitter when PyYAML has it: the pure-Python one takes seconds per megabyte
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(value, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)


def _indented(text: str, indent: str) -> str:
    """`text` with each line that is not empty indented (an empty line inside a quoted
    scalar stays empty, so the scalar reads the same)."""
    return "".join(indent + line if line.strip("\n") else line for line in text.splitlines(True))


def render_jsonl(result: EvaluationResult) -> Iterator[str]:
    """One promptfoo result row per run, one JSON object per line (written a line at a
    time)."""
    for row in iter_rows(result):
        yield json.dumps(jsonable(row), ensure_ascii=False) + "\n"


def _output_text(output: Any) -> str:
    if output is None:
        return ""
    return output if isinstance(output, str) else json.dumps(jsonable(output), ensure_ascii=False)


def _named_scores_text(scores: dict[str, float]) -> str:
    rounded = {k: round(v, 2) for k, v in scores.items() if math.isfinite(v)}
    return json.dumps(rounded, separators=(",", ":")) if rounded else ""


def _csv_header(result: EvaluationResult) -> tuple[list[str], list[str], list[list[str]], bool]:
    """The CSV table's header, its variables, each column's metrics and whether a test has a
    description: read from every row once, before the table is written."""
    cols = columns(result)
    var_names: set[str] = set()
    metric_names: list[list[str]] = [[] for _ in cols]
    has_descriptions = False
    for row in iter_rows(result):
        var_names.update(row["testCase"]["vars"])
        names = metric_names[row["promptIdx"]]
        names.extend(n for n in row["namedScores"] if n not in names)
        has_descriptions = has_descriptions or bool(row["testCase"].get("description"))
    for names in metric_names:
        names.sort()
    variables = sorted(var_names)
    header = [*(["Description"] if has_descriptions else []), *variables]
    for column, names in zip(cols, metric_names, strict=True):
        header += [f"[{column.provider.label}] {column.prompt.label}", "Status", "Score"]
        header += ["Named Scores", *(f"Metric: {n}" for n in names), "Grader Reason", "Comment"]
    return header, variables, metric_names, has_descriptions


def render_csv(result: EvaluationResult) -> Iterator[str]:
    """promptfoo's CSV table: one line per test (each repeat its own line), a column group
    per (agent, prompt) with output, status, score, named scores, grader reason, comment.
    Written by the one formula-safe CSV writer: a header made of a dataset's column names
    is escaped as the cells are. The runs are read twice (the header needs every row's
    names), a test at a time."""
    header, var_names, metric_names, has_descriptions = _csv_header(result)
    yield from csv_lines(header, _csv_rows(result, var_names, metric_names, has_descriptions))


def _csv_rows(
    result: EvaluationResult,
    var_names: list[str],
    metric_names: list[list[str]],
    has_descriptions: bool,
) -> Iterator[list[Any]]:
    """The CSV table's lines after its header, a test at a time."""
    cols = columns(result)
    tests = itertools.groupby(iter_rows(result), key=lambda row: row["testIdx"])
    for _test_idx, grouped in tests:
        outputs = {row["promptIdx"]: row for row in grouped}
        first = next(iter(outputs.values()))
        line = [first["testCase"].get("description") or ""] if has_descriptions else []
        line += [_output_text(first["testCase"]["vars"].get(n)) for n in var_names]
        for column, names in zip(cols, metric_names, strict=True):
            if column.index not in outputs:
                line += [""] * (6 + len(names))
                continue
            row = outputs[column.index]
            status = {PASS: "PASS", ERROR_FAILURE: "ERROR"}.get(row["failureReason"], "FAIL")
            grading = row["gradingResult"] or {}
            line += [_output_text(row["response"].get("output")), status, f"{row['score']:.2f}"]
            line.append(_named_scores_text(row["namedScores"]))
            line += [
                f"{row['namedScores'][n]:.2f}" if n in row["namedScores"] else "" for n in names
            ]
            line += [grading.get("reason", ""), grading.get("comment", "")]
        yield line
