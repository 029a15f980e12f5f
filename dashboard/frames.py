"""Stored statistics reshaped into the tables the pages show and chart.

Pure functions from the store's rows and the harness's `Summary` / `GateReport` dicts to
pandas DataFrames: they select, rename, flatten and sort, and never estimate anything.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd

from evals.dashboard import history
from evals.dashboard.theme import when
from evals.model.results import RunRecord

SUITE_GROUP = "suite"


def _pair(interval: Any) -> tuple[float | None, float | None]:
    return (interval[0], interval[1]) if interval else (None, None)


def trend_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per evaluation and agent: pass rate, cost per accepted task and p95 latency,
    each with the interval the evaluation stored, and the runs and errored runs.

    Latency is left blank (NaN) for an agent with errored runs in that evaluation: its
    stored p95 counts the time errored runs took (a timeout's wait, a crash's instant), so
    it would show a failure as a latency change. Those runs are counted in `errors`."""
    records = []
    for row in rows:
        for agent in row["agents"] or []:
            pass_low, pass_high = _pair(agent.get("interval"))
            cpa_low, cpa_high = _pair(agent.get("cost_per_accepted_interval"))
            p95_low, p95_high = _pair(agent.get("p95_latency_interval"))
            errors = agent.get("errors") or 0
            p95 = agent.get("p95_latency_ms") if not errors else None
            records.append(
                {
                    "started": pd.to_datetime(row["started_at"], unit="s", utc=True),
                    "when": when(row["started_at"]),
                    "evaluation": row["id"],
                    "commit": (row.get("git_commit") or "")[:10],
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
                    "p95_latency_ms": p95,
                    "p95_low": p95_low if p95 is not None else None,
                    "p95_high": p95_high if p95 is not None else None,
                    "runs": agent.get("runs") or 0,
                    "errors": errors,
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


def priority_rank(priority: str | None) -> tuple[int, str]:
    """Sort key of a priority: P0 before P1 before P2 ..., named ones after, none last."""
    if not priority:
        return (2, "")
    match = re.fullmatch(r"[Pp](\d+)", priority.strip())
    return (0, f"{int(match.group(1)):06d}") if match else (1, priority)


def evidence_key(case: dict[str, Any]) -> tuple[float, float, float]:
    """Sort key of a compared group by evidence: adjusted p, then p, then larger size."""
    adjusted = case.get("p_adjusted")
    p_value = case.get("p_value")
    difference = case.get("difference")
    return (
        adjusted if adjusted is not None else 2.0,
        p_value if p_value is not None else 2.0,
        -abs(difference) if difference is not None else 0.0,
    )


# Rows of the case table by verdict: what needs a look first.
_VERDICT_FIRST = {"regression": 0, "improvement": 1}


def case_table(
    comparison: dict[str, Any],
    assertion_types: list[dict[str, Any]],
    failing: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Every compared case: regressions first, then improvements, then the rest, each by
    priority (P0 first) then evidence (adjusted p, p, size).

    `graders` lists the assertion types that checked the case, from `assertion_types`;
    `failing_assertion` is the candidate's failing assertion of the case, from `failing`.
    """
    graders: dict[str, list[str]] = {}
    for row in assertion_types:
        graders.setdefault(row["case_id"], []).append(row["type"])
    failing = failing or {}
    records = []
    ordered = sorted(
        comparison["cases"],
        key=lambda c: (
            _VERDICT_FIRST.get(c["verdict"], 2),
            priority_rank(c.get("priority")),
            evidence_key(c),
        ),
    )
    for case in ordered:
        low, high = _pair(case.get("interval"))
        records.append(
            {
                "verdict": case["verdict"],
                "case": case["case_id"],
                "description": case["description"],
                "priority": case.get("priority") or "",
                "tags": list(case.get("tags") or []),
                "failing_assertion": failing.get(case["case_id"], ""),
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


def search_cases(frame: pd.DataFrame, text: str) -> pd.DataFrame:
    """Rows whose case id, description or failing assertion contains `text` (any case)."""
    if not text:
        return frame
    needle = text.lower()
    haystack = (
        frame["case"].str.lower()
        + "\n"
        + frame["description"].str.lower()
        + "\n"
        + frame["failing_assertion"].str.lower()
    )
    return frame[haystack.str.contains(needle, regex=False)]


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


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _short(value: Any, limit: int = 400) -> str:
    text = _compact(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def timeline_frame(record: RunRecord) -> pd.DataFrame:
    """A run's trajectory read top to bottom: when each step started (ms after the run
    began), how long it took, what it called with which arguments, and what came back."""
    origin = record.started_at
    rows = []
    for number, step in enumerate(record.response.trajectory, start=1):
        start = (step.started_at - origin) * 1000 if step.started_at is not None else None
        rows.append(
            {
                "#": number,
                "at": "" if start is None else f"+{start:,.0f} ms",
                "took": "" if step.duration_ms is None else f"{step.duration_ms:,.0f} ms",
                "step": f"{step.kind} {step.name}",
                "arguments": "" if step.arguments is None else _short(step.arguments),
                "result": f"error: {step.error}"
                if step.error
                else ("" if step.result is None else _short(step.result)),
            }
        )
    return pd.DataFrame.from_records(
        rows, columns=["#", "at", "took", "step", "arguments", "result"]
    )


def trajectory_text(record: RunRecord) -> str:
    """A run's trajectory as one line per step (kind, name, arguments, result or error),
    without timings, so two runs' trajectories can be diffed."""
    lines = []
    for step in record.response.trajectory:
        line = f"{step.kind} {step.name}"
        if step.arguments is not None:
            line += f" {_compact(step.arguments)}"
        if step.error:
            line += f" → error: {step.error}"
        elif step.result is not None:
            line += f" → {_compact(step.result)}"
        lines.append(line)
    return "\n".join(lines)


def group_trend_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per evaluation and agent of a tag's or case's history (from
    `DashboardQueries.group_trend`): its pass rate and interval, and the comparison's
    verdict, difference and q for the group when the evaluation compared two agents."""
    records = [
        {
            "started": pd.to_datetime(row["started_at"], unit="s", utc=True),
            "when": when(row["started_at"]),
            "evaluation": row["evaluation"],
            "commit": (row.get("git_commit") or "")[:10],
            "verdict": row.get("gate_verdict") or "",
            "agent": row["agent"],
            "pass_rate": row["pass_rate"],
            "pass_low": row["interval_lo"],
            "pass_high": row["interval_hi"],
            "runs": row["runs"],
            "errors": row["errors"],
            "group_verdict": row.get("verdict") or "",
            "difference": row.get("difference"),
            "q": row.get("q_value"),
            "suite_fingerprint": row.get("suite_fingerprint") or "",
        }
        for row in rows
    ]
    return pd.DataFrame.from_records(
        records,
        columns=[
            "started",
            "when",
            "evaluation",
            "commit",
            "verdict",
            "agent",
            "pass_rate",
            "pass_low",
            "pass_high",
            "runs",
            "errors",
            "group_verdict",
            "difference",
            "q",
            "suite_fingerprint",
        ],
    )


def edits(
    fingerprints: list[str],
    case_fingerprints: list[str | None] | None = None,
    *,
    members: list[list[str] | None] | None = None,
) -> list[str]:
    """Per evaluation of a history (oldest first, by suite fingerprint), what changed
    since the one before: `suite edited` where the suite's fingerprint differs, `case
    redefined` where (for a case) its own fingerprint differs too, and (for a tag, given
    its cases per evaluation in `members`) which cases joined and left the tag:
    `suite edited: refund-card joined; refund-old left`; empty otherwise."""
    found = []
    for index, fingerprint in enumerate(fingerprints):
        if index == 0 or fingerprint == fingerprints[index - 1]:
            found.append("")
            continue
        case = case_fingerprints or []
        redefined = (
            bool(case)
            and case[index] is not None
            and case[index - 1] is not None
            and case[index] != case[index - 1]
        )
        text = "case redefined" if redefined else "suite edited"
        change = history.regrouping({}, members[index], members[index - 1]) if members else None
        if change is not None:
            text += ": " + history.moved_text(change.joined, change.left)
        found.append(text)
    return found


def clip_upper(frame: pd.DataFrame, field: str, quantile: float) -> tuple[pd.DataFrame, int]:
    """The rows whose `field` is at most its `quantile`, and how many were above it."""
    if frame.empty:
        return frame, 0
    limit = frame[field].quantile(quantile)
    kept = frame[frame[field] <= limit]
    return kept, len(frame) - len(kept)


def bin_counts(frame: pd.DataFrame, field: str, bins: int = 30) -> pd.DataFrame:
    """Runs per agent in `bins` equal-width bins of `field` shared by every agent.

    One row per agent and bin: `agent`, `low`, `high` (the bin's edges), `runs`, and
    `left`, `right`: the agent's slice of the bin, so agents' bars stand side by side. A
    chart of these rows carries a few dozen numbers instead of one per run. When every
    value is the same there is one bin, a tenth of the value wide, centred on it.
    """
    import numpy as np

    values = frame[field].dropna()
    if values.empty:
        return pd.DataFrame(columns=["agent", "low", "high", "runs", "left", "right"])
    low, high = float(values.min()), float(values.max())
    if low == high:
        # Every value the same: one bin around it, never reaching below zero for a
        # quantity that cannot (a cost, a latency), instead of numpy's [v - 0.5, v + 0.5].
        half = abs(low) * 0.05 or 0.5
        start = max(low - half, 0.0) if low >= 0 else low - half
        edges = np.array([start, low + half])
    else:
        edges = np.histogram_bin_edges(values.to_numpy(dtype=float), bins=bins)
    groups = list(frame.dropna(subset=[field]).groupby("agent", sort=False))
    share = 1 / len(groups)
    records: list[dict[str, Any]] = []
    for position, (agent, rows) in enumerate(groups):
        counts, _ = np.histogram(rows[field].to_numpy(dtype=float), bins=edges)
        records.extend(
            {
                "agent": agent,
                "low": float(low),
                "high": float(high),
                "runs": int(n),
                "left": float(low + (high - low) * share * position),
                "right": float(low + (high - low) * share * (position + 1)),
            }
            for low, high, n in zip(edges[:-1], edges[1:], counts, strict=True)
        )
    return pd.DataFrame.from_records(records)
