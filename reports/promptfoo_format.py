"""An evaluation as promptfoo's output-file document (results version 3).

promptfoo tools (`promptfoo import`, its viewer, scripts written against `-o out.json`)
read this shape, so it follows promptfoo 0.121 field by field: one column per
(agent, prompt) pair in `results.prompts` with summed metrics, one row per run in
`results.results`, and repeats as separate rows with consecutive `testIdx` values
(promptfoo expands `repeat: k` into k copies of each test). The harness's statistics
and gate decision ride along under one extra top-level key, `evals`.
"""

from __future__ import annotations

import hashlib
import platform
import sys
import uuid
from dataclasses import dataclass
from importlib import metadata as package_metadata
from typing import Any

from evals.model.evaluation import EvaluationResult
from evals.model.results import RunRecord
from evals.model.suite import Case, Prompt, ProviderSpec
from evals.reports.text import timestamp

RESULTS_VERSION = 3
PASS, ASSERT_FAILURE, ERROR_FAILURE = 0, 1, 2
_COMPLETION_DETAILS = (
    "reasoning",
    "acceptedPrediction",
    "rejectedPrediction",
    "cacheReadInputTokens",
    "cacheCreationInputTokens",
)
_TOKEN_KEYS = ("prompt", "completion", "cached", "total")


@dataclass(frozen=True, slots=True)
class Column:
    """One (agent, prompt) column of the promptfoo table."""

    index: int
    provider: ProviderSpec
    prompt: Prompt


def empty_token_usage() -> dict[str, Any]:
    """promptfoo's zeroed TokenUsage, with assertion usage nested."""
    usage: dict[str, Any] = dict.fromkeys(_TOKEN_KEYS, 0)
    usage["numRequests"] = 0
    usage["completionDetails"] = dict.fromkeys(_COMPLETION_DETAILS, 0)
    assertions: dict[str, Any] = {"total": 0, "prompt": 0, "completion": 0, "cached": 0}
    assertions["numRequests"] = 0
    assertions["completionDetails"] = dict.fromkeys(_COMPLETION_DETAILS, 0)
    usage["assertions"] = assertions
    return usage


def _add_tokens(target: dict[str, Any], usage: dict[str, Any]) -> None:
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


def prompt_id(prompt: Prompt) -> str:
    """promptfoo's prompt id: sha256 of the label (or id, or raw text)."""
    source = prompt.label or prompt.id or str(prompt.raw)
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def columns(result: EvaluationResult) -> list[Column]:
    """The table's columns: every evaluated agent crossed with every prompt, agent-major."""
    specs = {p.label: p for p in result.suite.providers}
    labels = result.meta.agents or [p.label for p in result.suite.providers]
    out: list[Column] = []
    for label in labels:
        for prompt in result.suite.prompts:
            out.append(Column(len(out), specs[label], prompt))
    return out


def test_indices(result: EvaluationResult) -> dict[tuple[int, int], int]:
    """(case index, repeat) -> promptfoo testIdx: each case's repeats are consecutive."""
    case_order = sorted({r.case_index for r in result.records})
    repeats = max([result.repeat, *(r.key.repeat + 1 for r in result.records)])
    return {
        (case_index, repeat): position * repeats + repeat
        for position, case_index in enumerate(case_order)
        for repeat in range(repeats)
    }


def failure_reason(record: RunRecord) -> int:
    """promptfoo's ResultFailureReason: 0 none, 1 assertion failed, 2 error."""
    return {"pass": PASS, "fail": ASSERT_FAILURE}.get(record.status, ERROR_FAILURE)


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


def _grading_result(record: RunRecord) -> dict[str, Any] | None:
    if record.grade is None:
        return None
    data = record.grade.to_dict()
    data.setdefault("namedScores", {})
    tokens = {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0}
    tokens.update(data.get("tokensUsed", {}))
    data["tokensUsed"] = tokens
    weights = _metric_weights(data, list(data["namedScores"]))
    if weights:
        data["namedScoreWeights"] = {name: w for name, (_, w) in weights.items()}
    return data


def _response(record: RunRecord) -> dict[str, Any]:
    response = record.response
    if record.status == "error" and response.output is None:
        return {"error": record.error or response.error or "error"}
    data: dict[str, Any] = {"output": response.output}
    if response.error:
        data["error"] = response.error
    if response.token_usage:
        data["tokenUsage"] = dict(response.token_usage)
    if response.cost is not None:
        data["cost"] = response.cost
    if response.cached:
        data["cached"] = True
    if response.finish_reason:
        data["finishReason"] = response.finish_reason
    if response.metadata:
        data["metadata"] = response.metadata
    return data


def _row_token_usage(record: RunRecord, grading: dict[str, Any] | None) -> dict[str, Any]:
    usage = empty_token_usage()
    _add_tokens(usage, record.response.token_usage)
    usage["numRequests"] = 1
    if grading is not None:
        for key in _TOKEN_KEYS:
            usage["assertions"][key] += int(grading["tokensUsed"].get(key) or 0)
        usage["assertions"]["numRequests"] = 1
    return usage


def test_case(case: Case) -> dict[str, Any]:
    """promptfoo's resolved test case: description, vars, assertions, options, metadata."""
    data: dict[str, Any] = {"description": case.description, "vars": case.vars}
    data["assert"] = [a.raw or {"type": a.type, "value": a.value} for a in case.asserts]
    data["options"] = case.options
    data["metadata"] = case.metadata
    if case.threshold is not None:
        data["threshold"] = case.threshold
    return data


def run_details(record: RunRecord) -> dict[str, Any]:
    """The harness's own facts about a run, kept in the row's metadata under `evals`."""
    return {
        "caseId": record.key.case_id,
        "agent": record.key.agent,
        "promptId": record.key.prompt_id,
        "repeat": record.key.repeat,
        "seed": record.seed,
        "status": record.status,
        "errorKind": record.error_kind,
        "stopReason": record.response.stop_reason,
        "policyViolation": bool(record.grade and record.grade.policy_violation),
        "startedAt": record.started_at,
        "endedAt": record.ended_at,
        "trajectory": [step.to_dict() for step in record.response.trajectory],
    }


def build_row(
    record: RunRecord, column: Column, case: Case, test_idx: int, evaluation_id: str
) -> dict[str, Any]:
    """One run as a promptfoo EvaluateResult row."""
    grading = _grading_result(record)
    reason = failure_reason(record)
    row: dict[str, Any] = {"cost": record.cost}
    if reason == ERROR_FAILURE:
        row["error"] = record.error or record.response.error or "error"
    elif reason == ASSERT_FAILURE and record.grade is not None:
        row["error"] = record.grade.reason
    run_name = f"{evaluation_id}/{'/'.join(map(str, record.key.as_tuple()))}"
    row |= {
        "gradingResult": grading,
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, run_name)),
        "latencyMs": round(record.latency_ms),
        "namedScores": dict(record.grade.named_scores) if record.grade else {},
        "prompt": {"raw": record.prompt, "label": column.prompt.label, "config": {}},
        "promptId": prompt_id(column.prompt),
        "promptIdx": column.index,
        "provider": {"id": column.provider.id, "label": column.provider.label},
        "response": _response(record),
        "score": record.grade.score if record.grade and reason != ERROR_FAILURE else 0,
        "success": reason == PASS,
        "testCase": test_case(case),
        "testIdx": test_idx,
        "tokenUsage": _row_token_usage(record, grading),
        "vars": record.vars,
        "metadata": {
            **case.metadata,
            **record.response.metadata,
            "repeatIndex": record.key.repeat,
            "evals": run_details(record),
        },
        "failureReason": reason,
    }
    return row


def _empty_metrics() -> dict[str, Any]:
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
    components = grading.get("componentResults", [])
    metrics["assertPassCount"] += sum(1 for c in components if c.get("pass"))
    metrics["assertFailCount"] += sum(1 for c in components if not c.get("pass"))
    metrics["totalLatencyMs"] += row["latencyMs"]
    usage = metrics["tokenUsage"]
    _add_tokens(usage, row["response"].get("tokenUsage") or {})
    usage["numRequests"] += 1
    for key in _TOKEN_KEYS:
        usage["assertions"][key] += int(grading.get("tokensUsed", {}).get(key) or 0)
    metrics["cost"] += row["cost"]


def _evals_section(result: EvaluationResult) -> dict[str, Any]:
    meta = result.meta
    return {
        "evaluationId": meta.id,
        "suite": {
            "id": meta.suite_id,
            "version": meta.suite_version,
            "fingerprint": meta.fingerprint,
            "description": meta.description,
            "path": str(result.suite.path),
        },
        "environment": meta.environment,
        "git": {"commit": meta.git_commit, "branch": meta.git_branch},
        "status": meta.status,
        "shard": meta.shard,
        "startedAt": timestamp(meta.started_at),
        "endedAt": timestamp(meta.ended_at) if meta.ended_at else None,
        "agents": meta.agents,
        "baseline": result.gate_config.baseline,
        "candidate": result.gate_config.candidate,
        "repeat": result.repeat,
        "summary": result.summary.to_dict(),
        "gates": result.gates.to_dict(),
    }


def _producer_version() -> str:
    try:
        return package_metadata.version("evals")
    except package_metadata.PackageNotFoundError:
        return "unknown"


def build_rows(result: EvaluationResult) -> list[dict[str, Any]]:
    """Every run as a promptfoo row, ordered by (testIdx, promptIdx) like promptfoo."""
    cases = {c.index: c for c in result.suite.cases}
    by_key: dict[tuple[str, str | None], Column] = {
        (c.provider.label, c.prompt.id): c for c in columns(result)
    }
    single_prompt = result.suite.prompts[0].id if len(result.suite.prompts) == 1 else None
    indices = test_indices(result)
    rows = []
    for record in result.records:
        prompt_key = record.key.prompt_id or single_prompt
        column = by_key[(record.key.agent, prompt_key)]
        test_idx = indices[(record.case_index, record.key.repeat)]
        rows.append(build_row(record, column, cases[record.case_index], test_idx, result.meta.id))
    rows.sort(key=lambda r: (r["testIdx"], r["promptIdx"]))
    return rows


def build_document(result: EvaluationResult) -> dict[str, Any]:
    """The whole output file: evalId, results (v3), config, metadata and the `evals` key."""
    meta = result.meta
    rows = build_rows(result)
    prompts: list[dict[str, Any]] = []
    for column in columns(result):
        prompts.append(
            {
                "id": prompt_id(column.prompt),
                "raw": column.prompt.raw
                if isinstance(column.prompt.raw, str)
                else str(column.prompt.raw),
                "label": column.prompt.label,
                "provider": column.provider.label,
                "metrics": _empty_metrics(),
            }
        )
    for row in rows:
        accumulate(prompts[row["promptIdx"]]["metrics"], row)
    total_usage = empty_token_usage()
    for prompt in prompts:
        _add_usage(total_usage, prompt["metrics"]["tokenUsage"])
    duration_ms = round(((meta.ended_at or meta.started_at) - meta.started_at) * 1000)
    created = timestamp(meta.started_at)
    return {
        "evalId": f"eval-{meta.id}-{created[:19]}",
        "results": {
            "version": RESULTS_VERSION,
            "timestamp": created,
            "prompts": prompts,
            "results": rows,
            "stats": {
                "successes": sum(p["metrics"]["testPassCount"] for p in prompts),
                "failures": sum(p["metrics"]["testFailCount"] for p in prompts),
                "errors": sum(p["metrics"]["testErrorCount"] for p in prompts),
                "tokenUsage": total_usage,
                "durationMs": duration_ms,
                "evaluationDurationMs": duration_ms,
            },
        },
        "config": result.suite.raw,
        "shareableUrl": None,
        "metadata": {
            "evalsVersion": _producer_version(),
            "pythonVersion": platform.python_version(),
            "platform": sys.platform,
            "arch": platform.machine(),
            "exportedAt": timestamp(meta.ended_at or meta.started_at),
            "evaluationCreatedAt": created,
        },
        "vars": sorted({name for c in result.suite.cases for name in c.vars}),
        "runtimeOptions": {
            "eventSource": "evals",
            "repeat": result.repeat,
            "maxConcurrency": result.suite.evaluate_options.max_concurrency,
            "cache": False,
        },
        "evals": _evals_section(result),
    }
