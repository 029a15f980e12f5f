"""Stored statistics reshaped into the tables the pages show and chart.

Pure functions from the store's rows and the harness's `Summary` / `GateReport` dicts to
pandas DataFrames: they select, rename, flatten and sort, and never estimate anything.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from evals.model.results import RunRecord

SUITE_GROUP = "suite"


def _pair(interval: Any) -> tuple[float | None, float | None]:
    return (interval[0], interval[1]) if interval else (None, None)


def trend_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per evaluation and agent: pass rate, cost per accepted task and p95 latency,
    each with the interval the evaluation stored."""
    records = []
    for row in rows:
        for agent in row["agents"] or []:
            pass_low, pass_high = _pair(agent.get("interval"))
            cpa_low, cpa_high = _pair(agent.get("cost_per_accepted_interval"))
            p95_low, p95_high = _pair(agent.get("p95_latency_interval"))
            records.append(
                {
                    "started": pd.to_datetime(row["started_at"], unit="s", utc=True),
                    "evaluation": row["id"],
                    "environment": row["environment"] or "no environment",
                    "verdict": row["verdict"] or "",
                    "agent": agent["agent"],
                    "pass_rate": agent.get("pass_rate"),
                    "pass_low": pass_low,
                    "pass_high": pass_high,
                    "total_cost": agent.get("total_cost"),
                    "cost_per_accepted": agent.get("cost_per_accepted"),
                    "cpa_low": cpa_low,
                    "cpa_high": cpa_high,
                    "p95_latency_ms": agent.get("p95_latency_ms"),
                    "p95_low": p95_low,
                    "p95_high": p95_high,
                }
            )
    return pd.DataFrame.from_records(records)


def verdict_matrix(rows: list[dict[str, Any]], environments: list[str]) -> pd.DataFrame:
    """Suites down, environments across: the latest verdict of each, blank when never run."""
    table: dict[str, dict[str, str]] = {}
    for row in rows:
        environment = row["environment"] or "no environment"
        table.setdefault(row["suite_id"], {})[environment] = row["verdict"] or "no gates"
    columns = environments + sorted(
        {e for cells in table.values() for e in cells} - set(environments)
    )
    frame = pd.DataFrame.from_dict(table, orient="index", columns=columns).fillna("")
    frame.index.name = "suite"
    return frame


def forest_frame(comparison: dict[str, Any]) -> pd.DataFrame:
    """The suite and every tag: difference, interval and verdict, suite first."""
    groups = [comparison["overall"], *comparison["tags"]]
    records = []
    for group in groups:
        low, high = _pair(group.get("interval"))
        records.append(
            {
                "group": "whole suite"
                if group["group"] == SUITE_GROUP
                else f"tag {group['group']}",
                "cases": group["cases"],
                "difference": group.get("difference"),
                "low": low,
                "high": high,
                "verdict": group["verdict"],
                "level": group.get("level"),
                "q": group.get("p_adjusted"),
                "explanation": group.get("explanation", ""),
            }
        )
    return pd.DataFrame.from_records(records)


def _evidence_key(case: dict[str, Any]) -> tuple[float, float, float]:
    adjusted = case.get("p_adjusted")
    p_value = case.get("p_value")
    difference = case.get("difference")
    return (
        adjusted if adjusted is not None else 2.0,
        p_value if p_value is not None else 2.0,
        -abs(difference) if difference is not None else 0.0,
    )


def case_table(comparison: dict[str, Any], assertion_types: list[dict[str, Any]]) -> pd.DataFrame:
    """Every compared case, strongest evidence first (adjusted p, then p, then size).

    `graders` lists the assertion types that checked the case, from `assertion_types`.
    """
    graders: dict[str, list[str]] = {}
    for row in assertion_types:
        graders.setdefault(row["case_id"], []).append(row["type"])
    records = []
    for case in sorted(comparison["cases"], key=_evidence_key):
        low, high = _pair(case.get("interval"))
        records.append(
            {
                "verdict": case["verdict"],
                "case": case["case_id"],
                "description": case["description"],
                "priority": case.get("priority") or "",
                "tags": list(case.get("tags") or []),
                "graders": sorted(graders.get(case["case_id"], [])),
                "baseline": case["baseline"]["pass_rate"],
                "candidate": case["candidate"]["pass_rate"],
                "difference": case.get("difference"),
                "low": low,
                "high": high,
                "p_value": case.get("p_value"),
                "p_adjusted": case.get("p_adjusted"),
                "level": case.get("level"),
                "reason": case.get("reason", ""),
                "baseline_runs": case["baseline"]["runs"],
                "candidate_runs": case["candidate"]["runs"],
            }
        )
    return pd.DataFrame.from_records(records)


def filter_cases(
    frame: pd.DataFrame,
    *,
    tags: list[str],
    priorities: list[str],
    graders: list[str],
    verdicts: list[str],
) -> pd.DataFrame:
    """Rows matching every non-empty filter (any of the chosen tags and graders)."""
    keep = pd.Series(True, index=frame.index)
    if tags:
        keep &= frame["tags"].map(lambda values: bool(set(values) & set(tags)))
    if graders:
        keep &= frame["graders"].map(lambda values: bool(set(values) & set(graders)))
    if priorities:
        keep &= frame["priority"].isin(priorities)
    if verdicts:
        keep &= frame["verdict"].isin(verdicts)
    return frame[keep]


def gate_frame(gates: dict[str, Any]) -> pd.DataFrame:
    """One row per gate: status, measured value, threshold, the fail and pass limits with
    their levels, the gate's share of the budget, and the reason."""
    records = []
    for gate in gates.get("gates", []):
        records.append(
            {
                "gate": gate["name"],
                "status": gate["status"],
                "measured": gate.get("measured"),
                "threshold": gate.get("threshold"),
                "fail_limit": gate.get("fail_limit"),
                "fail_level": gate.get("fail_level"),
                "pass_limit": gate.get("pass_limit"),
                "pass_level": gate.get("pass_level"),
                "share": gate.get("share"),
                "blocking": gate.get("blocking", True),
                "reason": gate["reason"],
            }
        )
    return pd.DataFrame.from_records(records)


def flaky_cases(summary: dict[str, Any]) -> pd.DataFrame:
    """Cases that both passed and failed, most flaky first, per agent."""
    records = [
        {
            "case": stats["case_id"],
            "agent": stats["agent"],
            "flake": stats["flake"],
            "passes": stats["passes"],
            "fails": stats["fails"],
            "errors": stats["errors"],
            "pass_rate": stats["pass_rate"],
        }
        for stats in summary.get("case_stats", [])
        if stats.get("flake")
    ]
    frame = pd.DataFrame.from_records(
        records, columns=["case", "agent", "flake", "passes", "fails", "errors", "pass_rate"]
    )
    return frame.sort_values(["flake", "case"], ascending=[False, True], ignore_index=True)


def agent_estimates(summary: dict[str, Any], value: str, interval: str) -> pd.DataFrame:
    """Per agent of a summary: one stored estimate and its interval (rows without one dropped)."""
    records = []
    for stats in summary.get("agents", []):
        low, high = _pair(stats.get(interval))
        if stats.get(value) is None or low is None:
            continue
        records.append({"agent": stats["agent"], "value": stats[value], "low": low, "high": high})
    return pd.DataFrame.from_records(records, columns=["agent", "value", "low", "high"])


def as_text(value: Any) -> str:
    """A step's arguments or result as plain text: JSON for structures, str otherwise."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def step_frame(record: RunRecord) -> pd.DataFrame:
    """One row per step of a run: what it was, how long it took, its tokens and cost."""
    origin = record.started_at
    records = []
    for number, step in enumerate(record.response.trajectory, start=1):
        records.append(
            {
                "step": number,
                "kind": step.kind,
                "name": step.name,
                "start_ms": (step.started_at - origin) * 1000
                if step.started_at is not None
                else None,
                "duration_ms": step.duration_ms,
                "input_tokens": step.input_tokens,
                "output_tokens": step.output_tokens,
                "cost": step.cost,
                "status": "error" if step.error else "ok",
            }
        )
    return pd.DataFrame.from_records(
        records,
        columns=[
            "step",
            "kind",
            "name",
            "start_ms",
            "duration_ms",
            "input_tokens",
            "output_tokens",
            "cost",
            "status",
        ],
    )


def waterfall_frame(record: RunRecord) -> tuple[pd.DataFrame, str]:
    """Bars of the run's trace spans, or of its timed steps when it carries no trace.

    Returns the frame and what it was drawn from (`trace` or `trajectory`).
    """
    spans = [s for s in record.response.trace if s.get("start_ns") is not None]
    if spans:
        origin = min(s["start_ns"] for s in spans)
        rows = [
            {
                "label": f"{i:02d} {span['name']}",
                "kind": "span",
                "start_ms": (span["start_ns"] - origin) / 1e6,
                "end_ms": ((span.get("end_ns") or span["start_ns"]) - origin) / 1e6,
                "status": "error" if (span.get("status") or {}).get("code") == "ERROR" else "ok",
            }
            for i, span in enumerate(sorted(spans, key=lambda s: s["start_ns"]), start=1)
        ]
        return pd.DataFrame.from_records(rows), "trace"
    timed = [(s, s.started_at) for s in record.response.trajectory if s.started_at is not None]
    if not timed:
        return pd.DataFrame(columns=["label", "kind", "start_ms", "end_ms", "status"]), "trajectory"
    origin = min(start for _, start in timed)
    rows = [
        {
            "label": f"{i:02d} {step.kind} {step.name}",
            "kind": step.kind,
            "start_ms": (start - origin) * 1000,
            "end_ms": ((step.ended_at or start) - origin) * 1000,
            "status": "error" if step.error else "ok",
        }
        for i, (step, start) in enumerate(timed, start=1)
    ]
    return pd.DataFrame.from_records(rows), "trajectory"


def assertion_rows(record: RunRecord) -> pd.DataFrame:
    """Each assertion of a run's grade (nested ones indented): verdict, score and reason."""
    rows: list[dict[str, Any]] = []

    def walk(grade: Any, depth: int) -> None:
        for child in grade.component_results:
            assertion = child.assertion or {}
            rows.append(
                {
                    "assertion": "  " * depth + str(assertion.get("type", "")),
                    "verdict": "pass" if child.passed else "fail",
                    "reason": child.reason,
                    "score": child.score,
                    "value": as_text(assertion.get("value", "")),
                }
            )
            walk(child, depth + 1)

    if record.grade is not None:
        walk(record.grade, 0)
    return pd.DataFrame.from_records(
        rows, columns=["assertion", "verdict", "reason", "score", "value"]
    )
