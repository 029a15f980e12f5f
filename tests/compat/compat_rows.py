"""Row-by-row comparison of an evaluation with a promptfoo golden.

Rows are keyed by (prompt label, provider, test vars, repeat position): the n-th row of
the same key in promptfoo's test order is matched with the n-th in the harness's. Rows of a
test with a group assertion (max-score, select-best) also have their components and the
comparison's reason compared, whether or not the row failed.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from evals.common.jsvalues import js_stringify
from evals.graders.registry import GROUP_TYPES
from evals.model.evaluation import EvaluationResult
from evals.suite.derived import column_scores

Key = tuple[str, str, str, int]


def _canonical(value: Any) -> Any:
    """promptfoo's output file re-serializes string vars holding JSON compactly."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.dumps(json.loads(value), separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            return value
    return value


def _vars_key(variables: dict[str, Any]) -> str:
    """The vars as promptfoo's output file holds them (JSON.stringify), in one text."""
    canonical = json.loads(js_stringify({k: _canonical(v) for k, v in variables.items()}))
    return json.dumps(canonical, sort_keys=True, ensure_ascii=False)


def _keyed(rows: list[tuple[str, str, dict[str, Any], dict[str, Any]]]) -> dict[Key, dict]:
    """Rows keyed by (prompt label, provider, vars, repeat position). A label holding JSON
    is compared compactly: promptfoo's rows carry a JSON prompt's label re-serialized while
    its columns keep the label as written."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out: dict[Key, dict] = {}
    for prompt, provider, variables, row in rows:
        base = (_canonical(prompt), provider, _vars_key(variables))
        out[(*base, seen[base])] = row
        seen[base] += 1
    return out


def golden_rows(golden: dict[str, Any]) -> dict[Key, dict]:
    """promptfoo's rows, keyed."""
    return _keyed([(r["promptLabel"], r["provider"], r["vars"], r) for r in golden["rows"]])


def harness_rows(result: EvaluationResult) -> dict[Key, dict]:
    """The harness's rows in promptfoo's shape, keyed."""
    suite = result.suite
    records = sorted(result.records, key=lambda r: (r.case_index, r.key.repeat, r.prompt_index))
    rows = []
    for record in records:
        grade = record.grade
        row = {
            "success": record.passed,
            "score": grade.score if grade else 0.0,
            "namedScores": dict(grade.named_scores) if grade else {},
            "error": record.error,
            "output": record.response.output,
            "components": [
                {
                    "type": (c.assertion or {}).get("type"),
                    "pass": c.passed,
                    "score": c.score,
                    "reason": c.reason,
                }
                for c in (grade.component_results if grade else [])
            ],
        }
        case = suite.cases[record.case_index]
        prompt = suite.prompts[record.prompt_index]
        rows.append((prompt.label, record.key.agent, case.vars, row))
    return _keyed(rows)


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return round(a, 4) == round(b, 4)


def row_differences(expected: dict, actual: dict) -> list[str]:
    """What differs between a promptfoo row and the harness's row for the same key."""
    out = []
    if expected["success"] != actual["success"]:
        out.append(f"pass {expected['success']} != {actual['success']}")
    if not _close(float(expected["score"]), float(actual["score"])):
        out.append(f"score {expected['score']} != {actual['score']}")
    names = set(expected["namedScores"]) | set(actual["namedScores"])
    for name in sorted(names):
        a, b = expected["namedScores"].get(name), actual["namedScores"].get(name)
        if a is None or b is None or not _close(float(a), float(b)):
            out.append(f"named score {name}: {a} != {b}")
    compared = any(c["type"] in GROUP_TYPES for c in expected["components"])
    if expected["error"] is None or compared:
        got = [(c["type"], c["pass"]) for c in actual["components"]]
        want = [(c["type"], c["pass"]) for c in expected["components"]]
        if got != want:
            out.append(f"components {want} != {got}")
    for want, got in zip(expected["components"], actual["components"], strict=False):
        if "reason" in want and want["reason"] != got["reason"]:
            out.append(f"{want['type']} reason {want['reason']!r} != {got['reason']!r}")
    return out


def differences(golden: dict[str, Any], result: EvaluationResult) -> list[str]:
    """Every difference between promptfoo's rows and columns and the harness's."""
    expected, actual = golden_rows(golden), harness_rows(result)
    out = [f"missing row {k}" for k in expected.keys() - actual.keys()]
    out += [f"extra row {k}" for k in actual.keys() - expected.keys()]
    for key in expected.keys() & actual.keys():
        out += [f"{key}: {d}" for d in row_differences(expected[key], actual[key])]
    out += column_differences(golden, result)
    return out


def column_differences(golden: dict[str, Any], result: EvaluationResult) -> list[str]:
    """Differences in per-column named scores, where derived metrics are computed."""
    suite = result.suite
    if not suite.derived_metrics:
        return []
    ours = column_scores(result.records, suite.derived_metrics)
    labels = [p.label for p in suite.prompts]
    out = []
    for column in golden["columns"]:
        key = (labels.index(column["label"]), column["provider"])
        got = ours.get(key, {})
        for name, value in column["namedScores"].items():
            if name not in got or not _close(float(value), float(got[name])):
                out.append(f"column {key} metric {name}: {value} != {got.get(name)}")
    return out
