"""The store's rows as plain values: what both ways of writing a store share.

`evals.store.schema` declares the tables for SQLAlchemy (PostgreSQL, migrations, reads);
`evals.store.sqlite_direct` writes a current SQLite store with the standard library alone.
Both build their rows here, so an evaluation, a run or a gate decision is the same row
whichever wrote it. Nothing here imports SQLAlchemy.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from evals.common.encoding import dump_json
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationMeta
from evals.model.summary import GateReport
from evals.store.codec import GRADE_COLUMNS, RUN_COLUMNS, EncodedRun

SCHEMA_VERSION = 7

RUN_KEY_COLUMNS = ("evaluation_id", "case_id", "agent", "prompt_id", "repeat")

RUN_JSON_COLUMNS = frozenset({"vars", "output", "trajectory", "trace", "extra"})
_RUN_JSON_POSITIONS = tuple(i for i, name in enumerate(RUN_COLUMNS) if name in RUN_JSON_COLUMNS)

EVALUATION_JSON_COLUMNS = frozenset(
    {"config", "agents", "summary", "gates", "outline", "agent_fingerprints"}
)

META_COLUMNS = (
    "id",
    "suite_id",
    "suite_version",
    "fingerprint",
    "description",
    "environment",
    "git_commit",
    "git_branch",
    "started_at",
    "ended_at",
    "status",
    "shard",
    "planned_runs",
    "stored_runs",
    "ci_event",
)


def run_values(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A `runs` row (as `encode_run` builds it, in `RUN_COLUMNS` order) as an insert
    binds it: its JSON columns serialized."""
    values = list(row)
    for position in _RUN_JSON_POSITIONS:
        if values[position] is not None:
            values[position] = dump_json(values[position])
    return tuple(values)


_KEY_ORDER = ("case_id", "agent", "prompt_id", "repeat")
run_key: Callable[[tuple[Any, ...]], tuple[Any, ...]] = operator.itemgetter(
    *(RUN_COLUMNS.index(name) for name in _KEY_ORDER)
)
"""The unique key of a `runs` row (`encode_run`'s values) within its evaluation, in
insert lock order: case, agent, prompt, repeat."""


InsertRows = Callable[[str, Sequence[str], list[tuple[Any, ...]], str], list[tuple[Any, ...]]]
"""Inserts value tuples into a table (name, columns, rows, end of the statement) and
returns the rows its RETURNING clause gives."""


def store_runs(encoded_runs: Sequence[EncodedRun], insert: InsertRows) -> int:
    """Insert runs not stored yet (by key) with their grades through `insert`, inside the
    caller's transaction; returns how many were new.

    Runs go in key order, one order for every writer, so concurrent batches lock keys in
    the same order; each run row has `ON CONFLICT DO NOTHING` on its key, and only the
    runs actually inserted get their grade rows.
    """
    unique = {run_key(run[0]): run for run in encoded_runs}
    by_key = {key: unique[key] for key in sorted(unique)}
    rows = [run_values(run[0]) for run in by_key.values()]
    conflict = ", ".join(f'"{name}"' for name in RUN_KEY_COLUMNS)
    returned = ", ".join(f'"{name}"' for name in ("id", *RUN_KEY_COLUMNS[1:]))
    suffix = f" ON CONFLICT ({conflict}) DO NOTHING RETURNING {returned}"
    inserted = insert("runs", RUN_COLUMNS, rows, suffix)
    grade_rows = [(run_id, *row) for run_id, *key in inserted for row in by_key[tuple(key)][1]]
    if grade_rows:
        insert("grades", GRADE_COLUMNS, grade_rows, "")
    return len(inserted)


def evaluation_values(meta: EvaluationMeta) -> dict[str, Any]:
    """The `evaluations` row of a new evaluation (JSON columns as Python values)."""
    values = {name: getattr(meta, name) for name in META_COLUMNS}
    values["agents"] = list(meta.agents)
    values["config"] = meta.config
    values["outline"] = meta.outline
    values["agent_fingerprints"] = dict(meta.agent_fingerprints)
    return values


def finished_values(
    meta: EvaluationMeta, document: dict[str, Any], gates: GateReport
) -> dict[str, Any]:
    """What the end of an evaluation sets on its `evaluations` row (`document` is the
    summary as a dict)."""
    return {
        "status": meta.status,
        "ended_at": meta.ended_at,
        "planned_runs": meta.planned_runs,
        "stored_runs": meta.stored_runs,
        "summary": document,
        "gates": gates.to_dict(),
        "verdict": gates.verdict,
    }


def gate_rows(evaluation_id: str, gates: GateReport) -> list[dict[str, Any]]:
    """The `gate_results` rows of a gate report, in the order the gates were decided."""
    return [
        {
            "evaluation_id": evaluation_id,
            "position": position,
            "name": gate.name,
            "status": gate.status,
            "threshold": gate.threshold,
            "measured": gate.measured,
            "interval_lo": gate.interval[0] if gate.interval else None,
            "interval_hi": gate.interval[1] if gate.interval else None,
            "reason": gate.reason,
            "blocking": gate.blocking,
        }
        for position, gate in enumerate(gates.gates)
    ]


def duplicate_evaluation(evaluation_id: str) -> SuiteError:
    """The error for a new evaluation whose id the store already holds."""
    return SuiteError(
        f"--evaluation-id {evaluation_id}: the store already holds an evaluation {evaluation_id}",
        fix="choose a new id (or leave --evaluation-id out for a generated one); "
        "to continue that evaluation, use --resume " + evaluation_id,
    )
