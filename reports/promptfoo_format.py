"""An evaluation as promptfoo's output-file document (results version 3).

promptfoo tools (`promptfoo import`, its viewer, scripts written against `-o out.json`)
read this shape, so it follows promptfoo 0.121 field by field: one column per
(agent, prompt) pair in `results.prompts` with summed metrics, one row per run in
`results.results`, and repeats as separate rows with consecutive `testIdx` values
(promptfoo expands `repeat: k` into k copies of each test). The harness's statistics
and gate decision ride along under one extra top-level key, `evals`. Each row is built
from the run's encoded form by `promptfoo_row.py`, which the JSON report process shares.
"""

from __future__ import annotations

import hashlib
import platform
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evals.analysis.cells import run_facts
from evals.model.evaluation import EvaluationResult
from evals.model.suite import Case, Prompt, ProviderSpec, Suite
from evals.model.triage import ANNOTATIONS_CHANGE_NO_GATE, TriageAction
from evals.reports.json_document import CONFIG_MARK
from evals.reports.promptfoo_row import (
    accumulate,
    empty_metrics,
    encoded_row,
    finish_metrics,
    producer_version,
    test_indices,
)
from evals.reports.text import timestamp
from evals.reports.view import every_run
from evals.store.codec import RunRow, encode_run
from evals.tracing.redact import Redactor

RESULTS_VERSION = 3


@dataclass(frozen=True, slots=True)
class Column:
    """One (agent, prompt) column of the promptfoo table."""

    index: int
    provider: ProviderSpec
    prompt: Prompt


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


def test_case(case: Case) -> dict[str, Any]:
    """promptfoo's resolved test case: description, vars, assertions, options, metadata.

    A test of a suite file that has no description has none here either, as in promptfoo
    (the harness's own name for it, `case-3`, is not promptfoo's)."""
    description = case.test.get("description") if case.test else case.description
    data: dict[str, Any] = {} if description is None else {"description": description}
    data["vars"] = case.vars
    data["assert"] = [a.raw or {"type": a.type, "value": a.value} for a in case.asserts]
    data["options"] = case.options
    data["metadata"] = case.metadata
    if case.threshold is not None:
        data["threshold"] = case.threshold
    return data


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
        "summary": _baseline_first(result, result.summary.to_dict()),
        "gates": result.gates.to_dict(),
        "annotations": {
            "note": ANNOTATIONS_CHANGE_NO_GATE,
            "items": [_annotation(a) for a in result.annotations],
        },
    }


def _annotation(action: TriageAction) -> dict[str, Any]:
    """One annotation of a run as the JSON report keeps it (the repeat from 0, as in the
    rows' `metadata.repeatIndex`)."""
    return {
        "id": action.id,
        "kind": action.kind,
        "label": action.label,
        "reason": action.reason,
        "actor": action.actor,
        "createdAt": timestamp(action.created_at),
        "evaluationId": action.evaluation_id,
        "caseId": action.case_id,
        "agent": action.agent,
        "promptId": action.prompt_id,
        "repeat": action.repeat,
    }


def _baseline_first(result: EvaluationResult, summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with its per-agent statistics in the reports' order: the baseline, the
    candidate, then the other agents (`agents` above keeps the suite's order)."""
    comparison = result.summary.comparison
    config = result.gate_config
    compared = (
        (comparison.baseline, comparison.candidate)
        if comparison is not None
        else (config.baseline, config.candidate)
    )
    order = {agent: i for i, agent in enumerate(a for a in compared if a is not None)}
    summary["agents"].sort(key=lambda stats: order.get(stats["agent"], len(order)))
    return summary


def _test_indices(result: EvaluationResult) -> dict[tuple[int, int], int]:
    """(case index, repeat) -> testIdx, from the records or from what was counted of them."""
    if result.records:
        return test_indices({(r.case_index, r.key.repeat) for r in result.records}, result.repeat)
    facts = run_facts(result)
    return test_indices({(i, facts.repeats - 1) for i in facts.case_indices}, result.repeat)


def iter_rows(result: EvaluationResult) -> Iterator[dict[str, Any]]:
    """Every run as a promptfoo row, ordered by (testIdx, promptIdx) like promptfoo, one
    row at a time as the runs are read in that order (`every_run`), so a report of a
    million runs never holds them all."""
    tests = {c.index: test_case(c) for c in result.suite.cases}
    cols = columns(result)
    fields = [column_fields(column) for column in cols]
    where = column_index(result.suite, cols)
    indices = _test_indices(result)
    evaluation_id = result.meta.id
    for record in every_run(result, "rows"):
        column = fields[where[(record.key.agent, record.key.prompt_id)]]
        values, grade_rows = encode_run(evaluation_id, record)
        run = RunRow._make(values)
        row = encoded_row(run, grade_rows, column, tests[record.case_index], evaluation_id)
        row["testIdx"] = indices[(record.case_index, record.key.repeat)]
        yield row


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


def column_fields(column: Column) -> dict[str, Any]:
    """What a row reads of its column (`promptfoo_row.encoded_row`): plain data, so the
    report process receives it without the suite's model."""
    return {
        "index": column.index,
        "label": column.prompt.label,
        "promptId": prompt_id(column.prompt),
        "provider": {"id": column.provider.id, "label": column.provider.label},
    }


def document_head(result: EvaluationResult, rows: Any, streamed: bool = False) -> dict[str, Any]:
    """The output file with `rows` standing for `results.results` and the columns'
    `results.prompts` and `results.stats` still to be filled in (`None`).

    `streamed` leaves out what the JSON report process works out while the evaluation
    runs, off the harness's path: the suite's configuration (`CONFIG_MARK` stands for it)
    and the producer's version (`None`)."""
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
        "config": CONFIG_MARK
        if streamed
        else Redactor(secrets=result.suite.secrets).config(result.suite.raw),
        "shareableUrl": None,
        "metadata": {
            "evalsVersion": None if streamed else producer_version(),
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


def column_metrics(result: EvaluationResult) -> list[dict[str, Any]]:
    """The columns with their metrics summed over every run's row, read one at a time."""
    prompts = column_prompts(columns(result))
    for row in iter_rows(result):
        accumulate(prompts[row["promptIdx"]]["metrics"], row)
    finish_metrics(prompts, result.suite.derived_metrics)
    return prompts
