"""RunRecords to table rows and back, losslessly.

A run is one `runs` row (its queryable numbers as columns, the rest of the agent's
response as JSON) plus one `grades` row per node of its grade tree, in pre-order, each
pointing at its parent, so per-assertion questions are plain SQL and the tree rebuilds
exactly.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from evals.common.encoding import encode_step
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.trajectory import Step


def _preorder(grade: Grade | None) -> list[tuple[Grade, int | None]]:
    """The nodes of a grade tree, root first, each with its parent's position."""
    if grade is None:
        return []
    children = grade.component_results
    if not any(child.component_results for child in children):  # a test's usual tree
        return [(grade, None), *((child, 0) for child in children)]
    nodes: list[tuple[Grade, int | None]] = []
    pending: list[tuple[Grade, int | None]] = [(grade, None)]
    while pending:
        node, parent = pending.pop()
        index = len(nodes)
        nodes.append((node, parent))
        pending.extend((child, index) for child in reversed(node.component_results))
    return nodes


NAN_SCORE = "NaN"
"""A node detail's `score` when the score is NaN: SQL stores NaN as NULL (SQLite) or not
at all in a NOT NULL column, so the `grades` row holds 0 and the detail the NaN."""


def _column_score(score: float) -> float:
    """A score as a `grades` row holds it: NaN as 0 (its node's details keep the NaN)."""
    return 0.0 if math.isnan(score) else score


def _grade_detail(node: Grade) -> dict[str, Any] | None:
    """The JSON-only parts of a node, None when it has none."""
    assertion, named, tokens, metadata = (
        node.assertion,
        node.named_scores,
        node.tokens_used,
        node.metadata,
    )
    nan = math.isnan(node.score)
    if not (named or tokens or metadata or nan):  # the usual node: its assertion at most
        return None if assertion is None else {"assertion": assertion}
    detail: dict[str, Any] = {} if assertion is None else {"assertion": assertion}
    if nan:
        detail["score"] = NAN_SCORE
    if named:
        detail["named_scores"] = named
    if tokens:
        detail["tokens_used"] = tokens
    if metadata:
        detail["metadata"] = metadata
    return detail


def _run_extra(record: RunRecord, details: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    response = record.response
    extra: dict[str, Any] = {}
    if response.token_usage:
        extra["token_usage"] = response.token_usage
    if response.metadata:
        extra["metadata"] = response.metadata
    if response.finish_reason is not None:
        extra["finish_reason"] = response.finish_reason
    if response.log_probs is not None:
        extra["log_probs"] = response.log_probs
    if response.error is not None:
        extra["error"] = response.error
    if response.latency_ms is not None:
        extra["agent_latency_ms"] = response.latency_ms
    if response.cached:
        extra["cached"] = response.cached
    if record.metadata:
        extra["run_metadata"] = record.metadata
    if any(details):
        extra["grade_details"] = [{} if detail is None else detail for detail in details]
    return extra or None


def reported_latency(extra: dict[str, Any]) -> float | None:
    """The latency the agent reported, from a run's extra JSON (`agent_latency_ms`; rows
    stored before it was named so hold it as `latency_ms`). The harness's wall time is the
    run's `latency_ms` column."""
    value = extra.get("agent_latency_ms", extra.get("latency_ms"))
    return float(value) if isinstance(value, int | float) else None


def _integer(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


GRADE_COLUMNS = (
    "run_id",
    "idx",
    "parent_idx",
    "type",
    "passed",
    "score",
    "reason",
    "metric",
    "weight",
    "policy_violation",
    "errored",
)


def _grade_row(index: int, node: Grade, parent: int | None) -> tuple[Any, ...]:
    assertion = node.assertion
    kind = metric = weight = None
    if assertion:
        kind, metric, weight = (
            assertion.get("type"),
            assertion.get("metric"),
            assertion.get("weight"),
        )
    return (
        index,
        parent,
        None if kind is None else str(kind),
        node.passed,
        _column_score(node.score),
        node.reason,
        None if metric is None else str(metric),
        None if weight is None else _number(weight),
        node.policy_violation,
        node.errored,
    )


class RunRow(NamedTuple):
    """A `runs` row read by name: `RunRow._make(values)` over the values `encode_run`
    builds, which are the table's columns but the generated id, in order
    (`RUN_COLUMNS`). The values travel as a plain tuple, which pickles and unpickles in
    about 60 % of the time a dict of the same 29 fields takes; the report reads them this
    way."""

    evaluation_id: str
    prompt_id: str
    case_id: str
    case_index: int
    prompt_index: int
    agent: str
    agent_index: int
    repeat: int
    seed: int
    prompt: str
    vars: dict[str, Any] | None
    output: Any
    status: str
    error: str | None
    error_kind: str | None
    score: float | None
    passed: bool | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int
    cost: float | None
    latency_ms: float
    steps: int
    stop_reason: str | None
    trajectory: list[dict[str, Any]] | None
    trace: list[dict[str, Any]] | None
    extra: dict[str, Any] | None
    started_at: float
    ended_at: float


RUN_COLUMNS: tuple[str, ...] = RunRow._fields
"""The `runs` columns an insert names (all but the generated id), in table order."""

EncodedRun = tuple[tuple[Any, ...], list[tuple[Any, ...]]]


def encode_run(evaluation_id: str, record: RunRecord) -> EncodedRun:
    """The `runs` row of a record (its values in `RUN_COLUMNS` order), and the `grades`
    rows of its grade tree.

    Grade rows go root first, in pre-order, as values in `GRADE_COLUMNS` order without
    the leading run id (known once the run row is inserted). The JSON-only parts of each
    node (assertion, named scores, metadata) travel in the run's `extra` column, one
    document per run rather than one per node.
    """
    response = record.response
    usage = response.token_usage
    grade = record.grade
    key = record.key
    nodes = _preorder(grade)
    grade_rows = [_grade_row(index, node, parent) for index, (node, parent) in enumerate(nodes)]
    values = (  # the fields of RunRow, in order
        evaluation_id,
        key.prompt_id,
        key.case_id,
        record.case_index,
        record.prompt_index,
        key.agent,
        record.agent_index,
        key.repeat,
        record.seed,
        record.prompt,
        record.vars or None,
        response.output,
        record.status,
        record.error,
        record.error_kind,
        None if grade is None or math.isnan(grade.score) else grade.score,
        grade.passed if grade is not None else None,
        _integer(usage.get("prompt")),
        _integer(usage.get("completion")),
        record.total_tokens,
        response.cost,
        record.latency_ms,
        len(response.trajectory),
        response.stop_reason,
        [encode_step(s) for s in response.trajectory] or None,
        response.trace or None,
        _run_extra(record, [_grade_detail(node) for node, _ in nodes]),
        record.started_at,
        record.ended_at,
    )
    return values, grade_rows


def _grade_node(values: tuple[Any, ...], detail: dict[str, Any]) -> Grade:
    """One node from its `GRADE_COLUMNS` values (without run id) and its JSON details."""
    _, _, _, passed, score, reason, _, _, policy_violation, errored = values
    return Grade(
        passed=bool(passed),
        score=math.nan if detail.get("score") == NAN_SCORE else score,
        reason=reason,
        assertion=detail.get("assertion"),
        named_scores=detail.get("named_scores") or {},
        tokens_used=detail.get("tokens_used") or {},
        policy_violation=bool(policy_violation),
        errored=bool(errored),
        metadata=detail.get("metadata") or {},
    )


def _grade_tree(rows: list[tuple[Any, ...]], details: list[dict[str, Any]] | None) -> Grade | None:
    nodes: list[Grade] = []
    for values in rows:
        idx, parent_idx = values[0], values[1]
        node = _grade_node(values, details[idx] if details else {})
        nodes.append(node)
        if parent_idx is not None:
            nodes[parent_idx].component_results.append(node)
    return nodes[0] if nodes else None


def decode_grades(rows: list[Any], details: list[dict[str, Any]] | None) -> Grade | None:
    """Rebuild the grade tree from its rows ordered by `idx` and the run's node details."""
    names = GRADE_COLUMNS[1:]
    return _grade_tree([tuple(getattr(row, name) for name in names) for row in rows], details)


def decode_run(row: Any, grade_rows: list[Any]) -> RunRecord:
    """The record a `runs` row and its `grades` rows were written from."""
    extra = row.extra or {}
    grade = decode_grades(grade_rows, extra.get("grade_details"))
    response = AgentResponse(
        output=row.output,
        error=extra.get("error"),
        token_usage=extra.get("token_usage") or {},
        cost=row.cost,
        metadata=extra.get("metadata") or {},
        trajectory=[Step.from_dict(s) for s in row.trajectory or []],
        stop_reason=row.stop_reason,
        finish_reason=extra.get("finish_reason"),
        latency_ms=reported_latency(extra),
        log_probs=extra.get("log_probs"),
        cached=bool(extra.get("cached")),
        trace=row.trace or [],
    )
    return RunRecord(
        key=RunKey(row.prompt_id, row.case_id, row.agent, row.repeat),
        case_index=row.case_index,
        prompt_index=row.prompt_index,
        agent_index=row.agent_index,
        seed=row.seed,
        prompt=row.prompt,
        vars=row.vars or {},
        response=response,
        status=row.status,
        grade=grade,
        error=row.error,
        error_kind=row.error_kind,
        latency_ms=row.latency_ms,
        started_at=row.started_at,
        ended_at=row.ended_at,
        metadata=extra.get("run_metadata") or {},
    )
