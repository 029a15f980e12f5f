"""promptfoo's output file and the harness's evaluation as comparable rows.

promptfoo's `-o out.json` is trimmed to a golden: per result row the prompt, provider,
test and repeat position, verdict, score, named scores and each component's type and
verdict (and the reason of comparison components); per prompt column the named scores
(where derived metrics land). The harness's records become rows of the same shape. Rows
are keyed by (prompt label, provider, test vars, repeat position): the n-th row of a key in
promptfoo's test order is matched with the n-th in the harness's, and a row agrees when
pass/fail, score (to 4 decimals), named scores and the components agree; rows of a test
with a group assertion (max-score, select-best) also compare components and the
comparison's reason when the row failed.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from evals.common.jsvalues import js_stringify, json_parse
from evals.graders.registry import GROUP_TYPES
from evals.model.evaluation import EvaluationResult
from evals.model.results import promptfoo_components
from evals.suite.derived import column_scores


def component_fields(component: dict[str, Any]) -> dict[str, Any]:
    """A component result's type, verdict and score; comparisons keep their reason too."""
    kind = (component.get("assertion") or {}).get("type")
    fields = {"type": kind, "pass": component["pass"], "score": component.get("score")}
    if kind in GROUP_TYPES:
        fields["reason"] = component.get("reason")
    return fields


def promptfoo_version(cli: Path) -> str:
    """The version string of the promptfoo package behind `cli`."""
    for directory in cli.resolve().parents:
        package = directory / "package.json"
        if package.is_file() and "version" in package.read_text(encoding="utf-8"):
            return str(json.loads(package.read_text(encoding="utf-8"))["version"])
    raise SystemExit(f"no package.json above {cli}")


def row_key_fields(result: dict[str, Any], prompt_positions: dict[int, int]) -> dict[str, Any]:
    """The identity of one result row, independent of promptfoo's internal ids."""
    provider = result.get("provider") or {}
    test = result.get("testCase") or {}
    return {
        "prompt": prompt_positions[result["promptIdx"]],
        "provider": provider.get("label") or provider.get("id"),
        "description": test.get("description"),
        "vars": result.get("vars") or {},
    }


def trim(output: dict[str, Any]) -> dict[str, Any]:
    """Keep the parts of promptfoo's output file the comparison reads."""
    results = output["results"]
    positions: dict[int, int] = {}
    per_provider: Counter[str] = Counter()
    columns = []
    for index, prompt in enumerate(results["prompts"]):
        positions[index] = per_provider[prompt["provider"]]
        per_provider[prompt["provider"]] += 1
        columns.append(
            {
                "prompt": positions[index],
                "provider": prompt["provider"],
                "label": prompt["label"],
                "namedScores": prompt["metrics"].get("namedScores", {}),
            }
        )
    rows = []
    ordered = sorted(results["results"], key=lambda r: (r["testIdx"], r["promptIdx"]))
    for result in ordered:
        grading = result.get("gradingResult") or {}
        rows.append(
            {
                **row_key_fields(result, positions),
                "promptLabel": (result.get("prompt") or {}).get("label"),
                "output": _response_output(result.get("response")),
                "success": result["success"],
                "score": result["score"],
                "namedScores": result.get("namedScores") or {},
                "error": result.get("error"),
                "failureReason": result.get("failureReason"),
                "components": [component_fields(c) for c in grading.get("componentResults") or []],
            }
        )
    return {"columns": columns, "rows": rows, "stats": results["stats"]}


def _response_output(response: Any) -> Any:
    """A row's output: its response's `output` (a provider may answer a bare value, which
    promptfoo keeps as the response and reads as no output)."""
    return response.get("output") if isinstance(response, dict) else None


def run_promptfoo(
    directory: Path, config: str, cli: Path, env: dict[str, str]
) -> tuple[dict[str, Any] | None, subprocess.CompletedProcess[str]]:
    """promptfoo's output file for `config` in `directory` (None if it wrote none).

    Runs `promptfoo eval -c CONFIG -o out.json --no-cache --no-table --no-write` with an
    empty HOME, telemetry and update checks off, and `env` added to the environment.
    """
    with tempfile.TemporaryDirectory() as home:
        out = Path(home) / "out.json"
        environment = {
            **os.environ,
            **env,
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "HOME": home,
        }
        cmd = [str(cli), "eval", "-c", config, "-o", str(out)]
        cmd += ["--no-cache", "--no-table", "--no-write"]
        proc = subprocess.run(cmd, cwd=directory, env=environment, capture_output=True, text=True)
        if not out.exists():
            return None, proc
        return json.loads(out.read_text(encoding="utf-8")), proc


Key = tuple[str, str, str, int]


def canonical_value(value: Any) -> Any:
    """`value` as promptfoo's sanitizeForDb leaves it in the output file: every string
    that JSON.parse reads as an object or array (surrounding whitespace allowed) becomes
    its compact JSON.stringify, the strings inside it treated alike, at any depth."""
    if isinstance(value, str):
        try:
            parsed = json_parse(value)
        except ValueError:
            return value
        return js_stringify(canonical_value(parsed)) if isinstance(parsed, (dict, list)) else value
    if isinstance(value, dict):
        return {k: canonical_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical_value(v) for v in value]
    return value


def _vars_key(variables: dict[str, Any]) -> str:
    """The vars as promptfoo's output file holds them (JSON.stringify), in one text."""
    canonical = json.loads(js_stringify(canonical_value(variables)))
    return json.dumps(canonical, sort_keys=True, ensure_ascii=False)


def _keyed(
    rows: list[tuple[str, str, dict[str, Any], dict[str, Any]]],
) -> dict[Key, dict[str, Any]]:
    """Rows keyed by (prompt label, provider, vars, repeat position). A label holding JSON
    is compared compactly: promptfoo's rows carry a JSON prompt's label re-serialized while
    its columns keep the label as written."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out: dict[Key, dict[str, Any]] = {}
    for prompt, provider, variables, row in rows:
        base = (canonical_value(prompt), provider, _vars_key(variables))
        out[(*base, seen[base])] = row
        seen[base] += 1
    return out


def golden_rows(golden: dict[str, Any]) -> dict[Key, dict[str, Any]]:
    """promptfoo's rows, keyed."""
    return _keyed([(r["promptLabel"], r["provider"], r["vars"], r) for r in golden["rows"]])


def harness_rows(result: EvaluationResult) -> dict[Key, dict[str, Any]]:
    """The harness's rows in promptfoo's shape, keyed."""
    suite = result.suite
    records = sorted(result.records, key=lambda r: (r.case_index, r.key.repeat, r.prompt_index))
    rows = []
    for record in records:
        # an error row is compared as promptfoo writes one: no score, named scores or
        # components, whatever checks the harness graded beside the one that raised
        grade = record.grade if record.status != "error" else None
        row = {
            "success": record.passed,
            "score": grade.score if grade else 0.0,
            "namedScores": dict(grade.named_scores) if grade else {},
            "error": record.error,
            "errored": record.status == "error",
            "output": record.response.output,
            "components": [
                {
                    "type": (c.get("assertion") or {}).get("type"),
                    "pass": c["pass"],
                    "score": c["score"],
                    "reason": c["reason"],
                }
                for c in promptfoo_components(
                    [g.to_dict() for g in (grade.component_results if grade else [])]
                )
            ],
        }
        case = suite.cases[record.case_index]
        row["description"] = case.test.get("description") if case.test else case.description
        prompt = suite.prompts[record.prompt_index]
        rows.append((prompt.label, record.key.agent, case.vars, row))
    return _keyed(rows)


def is_error_row(row: dict[str, Any]) -> bool:
    """Whether promptfoo could not grade the row (an error, not a failed check).

    promptfoo's `error` field also carries a failed test's reason; goldens written before
    `failureReason` was kept tell an error by its missing grading result.
    """
    if row.get("failureReason") is not None:
        return bool(row["failureReason"] == 2)
    return bool(row.get("error")) and not row["components"]


def _score(value: Any) -> float:
    """A score as a number: null (how JSON writes NaN and the infinities) is NaN."""
    return math.nan if value is None else float(value)


def _close(a: float, b: float) -> bool:
    """Equal to 4 decimals; NaN equals NaN, and equals an infinity: promptfoo's output
    file writes all three as null."""
    if not (math.isfinite(a) and math.isfinite(b)):
        if math.isnan(a) or math.isnan(b):
            return not (math.isfinite(a) or math.isfinite(b))
        return a == b
    return round(a, 4) == round(b, 4)


def row_differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """What differs between a promptfoo row and the harness's row for the same key."""
    out = []
    if expected["success"] != actual["success"]:
        out.append(f"pass {expected['success']} != {actual['success']}")
    if "description" in actual and expected.get("description") != actual["description"]:
        out.append(f"description {expected.get('description')!r} != {actual['description']!r}")
    errored = is_error_row(expected)
    if "errored" in actual and errored != actual["errored"]:
        out.append(
            "an error row in promptfoo, a graded row here"
            if errored
            else "a graded row in promptfoo, an error row here"
        )
    if not _close(_score(expected["score"]), _score(actual["score"])):
        out.append(f"score {expected['score']} != {actual['score']}")
    names = set(expected["namedScores"]) | set(actual["namedScores"])
    for name in sorted(names):
        a, b = expected["namedScores"].get(name), actual["namedScores"].get(name)
        both = name in expected["namedScores"] and name in actual["namedScores"]
        if not (both and _close(_score(a), _score(b))):
            out.append(f"named score {name}: {a} != {b}")
    compared = any(c["type"] in GROUP_TYPES for c in expected["components"])
    if not is_error_row(expected) or compared:
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
            if name not in got or not _close(_score(value), _score(got[name])):
                out.append(f"column {key} metric {name}: {value} != {got.get(name)}")
    return out
