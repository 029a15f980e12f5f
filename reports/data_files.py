"""Machine-readable reports: promptfoo JSON and YAML, JSON Lines and promptfoo's CSV table."""

from __future__ import annotations

import json
import math
from typing import Any

import yaml

from evals.common.spreadsheet import csv_text
from evals.model.evaluation import EvaluationResult
from evals.reports.json_document import ROWS_MARK, finished_row, render_document, row_fragment
from evals.reports.promptfoo_format import (
    build_document,
    build_rows,
    columns,
    document_head,
    duration_ms,
    table,
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
    rows, prompts = table(result)
    head = document_head(result, ROWS_MARK)
    fill_head(head, prompts, duration_ms(result))
    return render_document(head, (_finished(row) for row in rows))


def _finished(row: dict[str, Any]) -> bytes:
    """A row serialized once, its `testIdx` last (taken out first, so it is not twice)."""
    test_idx = row.pop("testIdx")
    return finished_row(row_fragment(row), test_idx)


def render_yaml(result: EvaluationResult) -> str:
    """The same document as the JSON report, in YAML, as promptfoo's `-o out.yaml` writes."""
    # libyaml's emitter when PyYAML has it: the pure-Python one takes seconds per megabyte
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        jsonable(build_document(result)),
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )


def render_jsonl(result: EvaluationResult) -> str:
    """One promptfoo result row per run, one JSON object per line."""
    return "".join(
        json.dumps(jsonable(row), ensure_ascii=False) + "\n" for row in build_rows(result)
    )


def _output_text(output: Any) -> str:
    if output is None:
        return ""
    return output if isinstance(output, str) else json.dumps(jsonable(output), ensure_ascii=False)


def _named_scores_text(scores: dict[str, float]) -> str:
    rounded = {k: round(v, 2) for k, v in scores.items() if math.isfinite(v)}
    return json.dumps(rounded, separators=(",", ":")) if rounded else ""


def render_csv(result: EvaluationResult) -> str:
    """promptfoo's CSV table: one line per test (each repeat its own line), a column group
    per (agent, prompt) with output, status, score, named scores, grader reason, comment.
    Written by the one formula-safe CSV writer: a header made of a dataset's column names
    is escaped as the cells are."""
    rows = build_rows(result)
    cols = columns(result)
    var_names = sorted({name for row in rows for name in row["testCase"]["vars"]})
    metric_names: list[list[str]] = [[] for _ in cols]
    for row in rows:
        names = metric_names[row["promptIdx"]]
        names.extend(n for n in row["namedScores"] if n not in names)
    for names in metric_names:
        names.sort()
    has_descriptions = any(row["testCase"].get("description") for row in rows)
    header = [*(["Description"] if has_descriptions else []), *var_names]
    for column, names in zip(cols, metric_names, strict=True):
        header += [f"[{column.provider.label}] {column.prompt.label}", "Status", "Score"]
        header += ["Named Scores", *(f"Metric: {n}" for n in names), "Grader Reason", "Comment"]
    by_test: dict[int, dict[int, dict[str, Any]]] = {}
    for row in rows:
        by_test.setdefault(row["testIdx"], {})[row["promptIdx"]] = row
    lines: list[list[Any]] = []
    for _test_idx, outputs in sorted(by_test.items()):
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
        lines.append(line)
    return csv_text(header, lines)
