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
from typing import Any

from evals.model.evaluation import EvaluationResult
from evals.model.results import RunRecord
from evals.model.suite import Case, Prompt, ProviderSpec, Suite
from evals.reports.text import timestamp
from evals.tracing.redact import Redactor

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


_URL_NAMESPACE = uuid.NAMESPACE_URL.bytes


def row_id(name: str) -> str:
    """`str(uuid.uuid5(uuid.NAMESPACE_URL, name))`, without building UUID objects (one per
    row of a large report)."""
    digest = bytearray(hashlib.sha1(_URL_NAMESPACE + name.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    text = digest.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def prompt_id(prompt: Prompt) -> str:
    """promptfoo's prompt id: sha256 of the label (or id, or raw text)."""
    source = prompt.label or prompt.id or str(prompt.raw)
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def suite_columns(suite: Suite, agents: list[str] | None) -> list[Column]:
    """The table's columns: every evaluated agent crossed with every prompt it may run
    (a provider's `prompts:` restricts it), agent-major."""
    from evals.plan.runs import ref_matches

    specs = {p.label: p for p in suite.providers}
    out: list[Column] = []
    for label in agents or [p.label for p in suite.providers]:
        provider = specs[label]
        for prompt in suite.prompts:
            allowed = provider.prompts is None or any(
                ref_matches(ref, prompt.id, prompt.label) for ref in provider.prompts
            )
            if allowed:
                out.append(Column(len(out), provider, prompt))
    return out


def columns(result: EvaluationResult) -> list[Column]:
    """The columns of an evaluation's table."""
    return suite_columns(result.suite, result.meta.agents)


def column_index(suite: Suite, cols: list[Column]) -> dict[tuple[str, str], int]:
    """(agent, the run key's prompt id) -> column index: how a run finds its column."""
    single = suite.prompts[0].id if len(suite.prompts) == 1 else None
    out = {(c.provider.label, c.prompt.id): c.index for c in cols}
    if single is not None:
        out |= {(c.provider.label, ""): c.index for c in cols}
    return out


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


def promptfoo_components(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A test's component results as promptfoo lists them: an assert-set's own result
    (without an assertion) followed by each of its components (with the set's assertion
    when they have none)."""
    out: list[dict[str, Any]] = []
    for component in components:
        assertion = component.get("assertion") or {}
        if assertion.get("type") != "assert-set":
            out.append(component)
            continue
        out.append({k: v for k, v in component.items() if k != "assertion"})
        for sub in component.get("componentResults") or []:
            out.append({**sub, "assertion": sub.get("assertion") or assertion})
    return out


def _grading_result(record: RunRecord) -> dict[str, Any] | None:
    if record.grade is None:
        return None
    data = record.grade.to_dict()
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
    record: RunRecord, column: Column, test: dict[str, Any], evaluation_id: str
) -> dict[str, Any]:
    """One run as a promptfoo EvaluateResult row, but for its `testIdx` (known once every
    run is, see `test_indices`); `test` is the case as `test_case` gives it."""
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
        "id": row_id(run_name),
        "latencyMs": round(record.latency_ms),
        "namedScores": dict(record.grade.named_scores) if record.grade else {},
        "prompt": {"raw": record.prompt, "label": column.prompt.label, "config": {}},
        "promptId": prompt_id(column.prompt),
        "promptIdx": column.index,
        "provider": {"id": column.provider.id, "label": column.provider.label},
        "response": _response(record),
        "score": record.grade.score if record.grade and reason != ERROR_FAILURE else 0,
        "success": reason == PASS,
        "testCase": test,
        "tokenUsage": _row_token_usage(record, grading),
        "vars": record.vars,
        "metadata": {
            **test["metadata"],
            **record.response.metadata,
            "repeatIndex": record.key.repeat,
            "evals": run_details(record),
        },
        "failureReason": reason,
    }
    return row


def empty_metrics() -> dict[str, Any]:
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
        "plannedRuns": meta.planned_runs,
        "storedRuns": meta.stored_runs,
        "agentFingerprints": meta.agent_fingerprints,
        "selection": {key: meta.config.get(key) for key in ("seed", "tags", "cases")},
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
    # Imported here: the report process, which never writes the head, does without it.
    from importlib import metadata as package_metadata

    try:
        return package_metadata.version("evals")
    except package_metadata.PackageNotFoundError:
        return "unknown"


def build_rows(result: EvaluationResult) -> list[dict[str, Any]]:
    """Every run as a promptfoo row, ordered by (testIdx, promptIdx) like promptfoo."""
    tests = {c.index: test_case(c) for c in result.suite.cases}
    cols = columns(result)
    where = column_index(result.suite, cols)
    indices = test_indices({(r.case_index, r.key.repeat) for r in result.records}, result.repeat)
    rows = []
    for record in result.records:
        column = cols[where[(record.key.agent, record.key.prompt_id)]]
        row = build_row(record, column, tests[record.case_index], result.meta.id)
        row["testIdx"] = indices[(record.case_index, record.key.repeat)]
        rows.append(row)
    rows.sort(key=lambda r: (r["testIdx"], r["promptIdx"]))
    return rows


def column_prompts(cols: list[Column]) -> list[dict[str, Any]]:
    """`results.prompts`: one entry per column, with empty metrics to accumulate into."""
    return [
        {
            "id": prompt_id(column.prompt),
            "raw": column.prompt.raw
            if isinstance(column.prompt.raw, str)
            else str(column.prompt.raw),
            "label": column.prompt.label,
            "provider": column.provider.label,
            "metrics": empty_metrics(),
        }
        for column in cols
    ]


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


def document_head(result: EvaluationResult, rows: Any) -> dict[str, Any]:
    """The output file with `rows` standing for `results.results` and the columns'
    `results.prompts` and `results.stats` still to be filled in (`None`)."""
    meta = result.meta
    created = timestamp(meta.started_at)
    return {
        "evalId": f"eval-{meta.id}-{created[:19]}",
        "results": {
            "version": RESULTS_VERSION,
            "timestamp": created,
            "prompts": None,
            "results": rows,
            "stats": None,
        },
        "config": Redactor(secrets=result.suite.secrets).config(result.suite.raw),
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


def duration_ms(result: EvaluationResult) -> int:
    """The evaluation's wall time, in milliseconds."""
    meta = result.meta
    return round(((meta.ended_at or meta.started_at) - meta.started_at) * 1000)


def fill_head(head: dict[str, Any], prompts: list[dict[str, Any]], duration: int) -> None:
    """Put the columns and the stats into a document head."""
    head["results"]["prompts"] = prompts
    head["results"]["stats"] = stats(prompts, duration)


def table(result: EvaluationResult) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows, and the columns with their metrics summed over the rows."""
    rows = build_rows(result)
    prompts = column_prompts(columns(result))
    for row in rows:
        accumulate(prompts[row["promptIdx"]]["metrics"], row)
    finish_metrics(prompts, result.suite.derived_metrics)
    return rows, prompts


def build_document(result: EvaluationResult) -> dict[str, Any]:
    """The whole output file: evalId, results (v3), config, metadata and the `evals` key."""
    rows, prompts = table(result)
    head = document_head(result, rows)
    fill_head(head, prompts, duration_ms(result))
    return head
