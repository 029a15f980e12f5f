"""A run's promptfoo row built straight from its encoded form, and the columns' metrics.

A run reaches the JSON report as the results store receives it (`encode_run`: the `runs`
row as a dict and its grade rows as tuples), so the row is built from that form without
rebuilding a RunRecord first. This module imports nothing of the harness: the JSON report
process (`json_spool.py`) loads it, orjson and its own loop only. Field by field, the row
is promptfoo 0.121's EvaluateResult (see `promptfoo_format.py` for the document around it).
"""

from __future__ import annotations

import hashlib
from typing import Any

from evals.model.results import promptfoo_components
from evals.store.codec import RunRow, reported_latency

PASS, ASSERT_FAILURE, ERROR_FAILURE = 0, 1, 2
_COMPLETION_DETAILS = (
    "reasoning",
    "acceptedPrediction",
    "rejectedPrediction",
    "cacheReadInputTokens",
    "cacheCreationInputTokens",
)
_TOKEN_KEYS = ("prompt", "completion", "cached", "total")
# uuid.NAMESPACE_URL, spelled out so the report process does without the uuid module.
_URL_NAMESPACE = bytes.fromhex("6ba7b8119dad11d180b400c04fd430c8")
# The fields of a grade row after its run id (`evals.store.codec.GRADE_COLUMNS[1:]`).
_PARENT, _PASSED, _SCORE, _REASON, _POLICY, _ERRORED = 1, 3, 4, 5, 8, 9
_NO_DETAIL: dict[str, Any] = {}  # a node without details (read only)


# A name-based UUID's version (5) and variant bits, as `uuid.UUID(version=5)` sets them.
_KEEP = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_VERSION_5 = (0x5000 << 64) | (0x8000 << 48)


def row_id(name: str) -> str:
    """`str(uuid.uuid5(uuid.NAMESPACE_URL, name))`, without building UUID objects (one per
    row of a large report)."""
    digest = hashlib.sha1(_URL_NAMESPACE + name.encode("utf-8")).digest()
    text = "%032x" % ((int.from_bytes(digest[:16], "big") & _KEEP) | _VERSION_5)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def producer_version() -> str:
    """The version of evals that writes the report, as its `metadata.evalsVersion`."""
    from evals import __version__

    return __version__


def failure_code(status: str) -> int:
    """promptfoo's ResultFailureReason of a run status: 0 none, 1 assertion failed, 2 error."""
    return {"pass": PASS, "fail": ASSERT_FAILURE}.get(status, ERROR_FAILURE)


def empty_token_usage() -> dict[str, Any]:
    """promptfoo's zeroed TokenUsage, with assertion usage nested (written out: every row
    has one, and a literal is built three times as fast as from the key lists)."""
    return {
        "prompt": 0,
        "completion": 0,
        "cached": 0,
        "total": 0,
        "numRequests": 0,
        "completionDetails": {
            "reasoning": 0,
            "acceptedPrediction": 0,
            "rejectedPrediction": 0,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
        },
        "assertions": {
            "total": 0,
            "prompt": 0,
            "completion": 0,
            "cached": 0,
            "numRequests": 0,
            "completionDetails": {
                "reasoning": 0,
                "acceptedPrediction": 0,
                "rejectedPrediction": 0,
                "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0,
            },
        },
    }


def _add_tokens(target: dict[str, Any], usage: dict[str, Any]) -> None:
    if not usage:  # no usage reported: nothing to add (most rows)
        return
    for key in _TOKEN_KEYS:
        target[key] += int(usage.get(key) or 0)
    if not usage.get("total"):
        target["total"] += int(usage.get("prompt") or 0) + int(usage.get("completion") or 0)


def _add_usage(target: dict[str, Any], usage: dict[str, Any]) -> None:
    """Sum one full TokenUsage (as built here) into another, nested parts included."""
    for key in (*_TOKEN_KEYS, "numRequests"):
        target[key] += usage[key]
    for key in _COMPLETION_DETAILS:
        target["completionDetails"][key] += usage["completionDetails"][key]
    for key in (*_TOKEN_KEYS, "numRequests"):
        target["assertions"][key] += usage["assertions"][key]


def test_indices(runs: set[tuple[int, int]], repeat: int) -> dict[tuple[int, int], int]:
    """(case index, repeat) of every run -> promptfoo testIdx: a case's repeats are
    consecutive, cases in suite order."""
    case_order = sorted({case_index for case_index, _ in runs})
    repeats = max([repeat, *(r + 1 for _, r in runs)])
    return {
        (case_index, r): position * repeats + r
        for position, case_index in enumerate(case_order)
        for r in range(repeats)
    }


def _metric_weights(grading: dict[str, Any], names: list[str]) -> dict[str, tuple[int, float]]:
    """(assertion count, weight total) behind each named score, as promptfoo accumulates."""
    out: dict[str, tuple[int, float]] = {}
    for name in names:
        contributing = [
            c.get("assertion") or {}
            for c in grading.get("componentResults", [])
            if (c.get("assertion") or {}).get("metric") == name
        ]
        n = len(contributing) or 1
        weight = sum(float(a.get("weight", 1)) for a in contributing) if contributing else 1.0
        out[name] = (n, weight)
    return out


def grade_dicts(
    rows: list[tuple[Any, ...]], details: list[dict[str, Any]] | None
) -> dict[str, Any] | None:
    """The grade tree of a run's encoded grade rows as `Grade.to_dict` gives it: the rows
    in pre-order (index, parent, ..., as `encode_run` writes them) and the run's node
    details (assertion, named scores, tokens, metadata) from its extra JSON."""
    nodes: list[dict[str, Any]] = []
    last = len(rows) - 1
    for position, values in enumerate(rows):
        detail = details[values[0]] if details else _NO_DETAIL
        node: dict[str, Any] = {
            "pass": bool(values[_PASSED]),
            "score": values[_SCORE],
            "reason": values[_REASON],
        }
        if len(detail) == 1 and (assertion := detail.get("assertion")) is not None:
            node["assertion"] = assertion  # most nodes: their assertion only
            detail = _NO_DETAIL
        elif detail:
            if detail.get("score") == "NaN":  # `evals.store.codec.NAN_SCORE`
                node["score"] = float("nan")
            if named := detail.get("named_scores"):
                node["namedScores"] = dict(named)
            if tokens := detail.get("tokens_used"):
                node["tokensUsed"] = dict(tokens)
            if (assertion := detail.get("assertion")) is not None:
                node["assertion"] = assertion
        # In pre-order a node's first child comes right after it.
        if position < last and rows[position + 1][_PARENT] == position:
            node["componentResults"] = []
        if values[_POLICY]:
            node["policyViolation"] = True
        if values[_ERRORED]:
            node["errored"] = True
        if detail and (metadata := detail.get("metadata")):
            node["metadata"] = metadata
        nodes.append(node)
        if (parent := values[_PARENT]) is not None:
            nodes[parent]["componentResults"].append(node)
    return nodes[0] if nodes else None


def _grading_result(grade: dict[str, Any] | None) -> dict[str, Any] | None:
    if grade is None:
        return None
    data = dict(grade)
    if "componentResults" in data:
        data["componentResults"] = promptfoo_components(data["componentResults"])
    data.setdefault("namedScores", {})
    tokens = {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0}
    tokens.update(data.get("tokensUsed", {}))
    data["tokensUsed"] = tokens
    weights = _metric_weights(data, list(data["namedScores"]))
    if weights:
        data["namedScoreWeights"] = {name: w for name, (_, w) in weights.items()}
    return data


def _js_number(value: float) -> float | int:
    """`value` as JSON.stringify writes it: whole numbers without a fraction."""
    return int(value) if value.is_integer() else value


def row_latency(wall_ms: float, extra: dict[str, Any]) -> float | int:
    """A row's `latencyMs` as promptfoo's evaluator sets it: the latency the provider
    returned (`reported_latency` of the run's `extra`), else the harness's wall time
    `wall_ms` in whole milliseconds, as promptfoo's clock counts it."""
    reported = reported_latency(extra)
    return round(wall_ms) if reported is None else _js_number(reported)


def _response(run: RunRow, extra: dict[str, Any]) -> dict[str, Any]:
    output = run.output
    if run.status == "error" and output is None:
        return {"error": run.error or extra.get("error") or "error"}
    data: dict[str, Any] = {"output": output}
    if error := extra.get("error"):
        data["error"] = error
    if usage := extra.get("token_usage"):
        data["tokenUsage"] = dict(usage)
    if run.cost is not None:
        data["cost"] = run.cost
    data["cached"] = bool(extra.get("cached"))
    if finish_reason := extra.get("finish_reason"):
        data["finishReason"] = finish_reason
    if (reported := reported_latency(extra)) is not None:
        data["latencyMs"] = _js_number(reported)
    if (log_probs := extra.get("log_probs")) is not None:
        data["logProbs"] = log_probs
    if metadata := extra.get("metadata"):
        data["metadata"] = metadata
    return data


def _row_token_usage(usage: dict[str, Any], grading: dict[str, Any] | None) -> dict[str, Any]:
    total = empty_token_usage()
    _add_tokens(total, usage)
    total["numRequests"] = 1
    if grading is not None:
        for key in _TOKEN_KEYS:
            total["assertions"][key] += int(grading["tokensUsed"].get(key) or 0)
        total["assertions"]["numRequests"] = 1
    return total


def step_dict(step: dict[str, Any]) -> dict[str, Any]:
    """An encoded trajectory step as `Step.to_dict` gives it: no empty fields."""
    return {k: v for k, v in step.items() if v is not None and v != {}}


def _run_details(run: RunRow, policy_violation: bool, cost_unknown: str | None) -> dict[str, Any]:
    """The harness's own facts about a run, kept in the row's metadata under `evals`."""
    details = {
        "caseId": run.case_id,
        "agent": run.agent,
        "promptId": run.prompt_id,
        "repeat": run.repeat,
        "seed": run.seed,
        "status": run.status,
        "errorKind": run.error_kind,
        "stopReason": run.stop_reason,
        "policyViolation": policy_violation,
        "startedAt": run.started_at,
        "endedAt": run.ended_at,
        "wallLatencyMs": run.latency_ms,
        "trajectory": [step_dict(step) for step in run.trajectory or []],
    }
    if cost_unknown is not None:
        details["costUnknown"] = cost_unknown
    return details


def encoded_row(
    run: RunRow,
    grade_rows: list[tuple[Any, ...]],
    column: dict[str, Any],
    test: dict[str, Any],
    evaluation_id: str,
    test_json: Any = None,
) -> dict[str, Any]:
    """One encoded run (`encode_run`: its row, read as a `RunRow`, and its grade rows) as
    a promptfoo EvaluateResult row, but for its `testIdx` (known once every run is, see
    `test_indices`). `column` is the run's column (`index`, `label`, `promptId`,
    `provider`), `test` the case as `test_case` gives it;
    `test_json`, when given, stands for `test` in the row's `testCase` (the test already
    serialized, an `orjson.Fragment`, shared by the rows that show it)."""
    extra = run.extra or {}
    grade = grade_dicts(grade_rows, extra.get("grade_details"))
    grading = _grading_result(grade)
    reason = failure_code(run.status)
    # the model no price was found for ("" when the run named none): promptfoo writes 0
    # for a cost it was not given; a cost the harness could not work out is null instead,
    # never a silent zero, and the row's `costUnknown` names that model
    cost_unknown = (extra.get("run_metadata") or {}).get("cost_unknown")
    row: dict[str, Any] = {"cost": None if cost_unknown is not None else run.cost or 0.0}
    if reason == ERROR_FAILURE:
        row["error"] = run.error or extra.get("error") or "error"
    elif reason == ASSERT_FAILURE and grade is not None:
        row["error"] = grade["reason"]
    key = (run.prompt_id, run.case_id, run.agent, run.repeat)
    run_name = f"{evaluation_id}/{'/'.join(map(str, key))}"
    row |= {
        "gradingResult": grading,
        "id": row_id(run_name),
        "latencyMs": row_latency(run.latency_ms, extra),
        "namedScores": dict(grade.get("namedScores", {}))
        if grade and reason != ERROR_FAILURE
        else {},
        "prompt": {"raw": run.prompt, "label": column["label"], "config": {}},
        "promptId": column["promptId"],
        "promptIdx": column["index"],
        "provider": column["provider"],
        "response": _response(run, extra),
        "score": grade["score"] if grade and reason != ERROR_FAILURE else 0,
        "success": reason == PASS,
        "testCase": test if test_json is None else test_json,
        "tokenUsage": _row_token_usage(extra.get("token_usage") or {}, grading),
        "vars": run.vars or {},
        "metadata": {
            **test["metadata"],
            **(extra.get("metadata") or {}),
            "repeatIndex": run.repeat,
            "evals": _run_details(run, bool(grade and grade.get("policyViolation")), cost_unknown),
        },
        "failureReason": reason,
    }
    return row


def empty_metrics() -> dict[str, Any]:
    """A column's metrics before any row."""
    return {
        "score": 0,
        "testPassCount": 0,
        "testFailCount": 0,
        "testErrorCount": 0,
        "assertPassCount": 0,
        "assertFailCount": 0,
        "totalLatencyMs": 0,
        "tokenUsage": empty_token_usage(),
        "namedScores": {},
        "namedScoresCount": {},
        "namedScoreWeights": {},
        "cost": 0,
    }


def accumulate(metrics: dict[str, Any], row: dict[str, Any]) -> None:
    """Add one row to its column's metrics exactly as promptfoo's evaluator does."""
    metrics["score"] += row["score"]
    grading = row["gradingResult"] or {}
    weights = _metric_weights(grading, list(row["namedScores"]))
    for name, value in row["namedScores"].items():
        n, weight = weights[name]
        metrics["namedScores"][name] = metrics["namedScores"].get(name, 0) + value * weight
        metrics["namedScoresCount"][name] = metrics["namedScoresCount"].get(name, 0) + n
        metrics["namedScoreWeights"][name] = metrics["namedScoreWeights"].get(name, 0) + weight
    if row["success"]:
        metrics["testPassCount"] += 1
    elif row["failureReason"] == ERROR_FAILURE:
        metrics["testErrorCount"] += 1
    else:
        metrics["testFailCount"] += 1
    # an error row keeps the checks graded beside the one that raised in its gradingResult,
    # but adds no assertion counts, as promptfoo's error rows (without one) add none
    components = (
        [] if row["failureReason"] == ERROR_FAILURE else grading.get("componentResults", [])
    )
    passed = sum(1 for c in components if c.get("pass"))
    metrics["assertPassCount"] += passed
    metrics["assertFailCount"] += len(components) - passed
    metrics["totalLatencyMs"] += row["latencyMs"]
    usage = metrics["tokenUsage"]
    _add_tokens(usage, row["response"].get("tokenUsage") or {})
    usage["numRequests"] += 1
    if tokens := grading.get("tokensUsed"):
        assertions = usage["assertions"]
        for key in _TOKEN_KEYS:
            assertions[key] += int(tokens.get(key) or 0)
    metrics["cost"] += row["cost"] or 0


def finish_metrics(prompts: list[dict[str, Any]], derived: list[tuple[str, str]]) -> None:
    """Add the derived metrics to each column's named scores, as promptfoo's evaluator
    leaves them once every row is in (`__count`: the column's rows)."""
    if not derived:
        return
    from evals.suite.derived import evaluate_metrics

    for prompt in prompts:
        metrics = prompt["metrics"]
        count = metrics["testPassCount"] + metrics["testFailCount"] + metrics["testErrorCount"]
        metrics["namedScores"] = evaluate_metrics(derived, metrics["namedScores"], count)


def stats(prompts: list[dict[str, Any]], duration_ms: int) -> dict[str, Any]:
    """`results.stats`: counts and token usage summed over the columns."""
    total_usage = empty_token_usage()
    for prompt in prompts:
        _add_usage(total_usage, prompt["metrics"]["tokenUsage"])
    return {
        "successes": sum(p["metrics"]["testPassCount"] for p in prompts),
        "failures": sum(p["metrics"]["testFailCount"] for p in prompts),
        "errors": sum(p["metrics"]["testErrorCount"] for p in prompts),
        "tokenUsage": total_usage,
        "durationMs": duration_ms,
        "evaluationDurationMs": duration_ms,
    }


def fill_head(head: dict[str, Any], prompts: list[dict[str, Any]], duration: int) -> None:
    """Put the columns and the stats into a document head."""
    head["results"]["prompts"] = prompts
    head["results"]["stats"] = stats(prompts, duration)
