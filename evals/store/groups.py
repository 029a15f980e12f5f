"""The rows of `group_rates` and `group_verdicts`, taken from a stored summary.

An evaluation's summary is one JSON document; questions across evaluations (how a tag or
a case moved, since when a case regresses) would otherwise read and parse every
document. When an evaluation finishes, each agent's rate over the suite, every tag and
every case, and the comparison's verdict for each of them, are copied into rows. Nothing
is computed here: the values are the summary's, as `evals.analysis` produced them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Connection

SUITE = "suite"


def _interval(stats: dict[str, Any]) -> tuple[float | None, float | None]:
    interval = stats.get("interval")
    return (interval[0], interval[1]) if interval else (None, None)


def _rate_row(evaluation_id: str, kind: str, name: str, stats: dict[str, Any]) -> dict[str, Any]:
    low, high = _interval(stats)
    return {
        "evaluation_id": evaluation_id,
        "kind": kind,
        "name": name,
        "agent": stats["agent"],
        "runs": stats.get("runs") or 0,
        "errors": stats.get("errors") or 0,
        "pass_rate": stats.get("pass_rate"),
        "interval_lo": low,
        "interval_hi": high,
    }


def rate_rows(evaluation_id: str, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per agent and group (suite, tag, case) of a summary dict."""
    rows = [_rate_row(evaluation_id, SUITE, "", a) for a in summary.get("agents") or []]
    rows += [_rate_row(evaluation_id, "tag", t["group"], t) for t in summary.get("tags") or []]
    rows += [
        _rate_row(evaluation_id, "case", c["case_id"], c) for c in summary.get("case_stats") or []
    ]
    return rows


def _verdict_row(
    evaluation_id: str, kind: str, name: str, group: dict[str, Any], rates: tuple[Any, Any]
) -> dict[str, Any]:
    low, high = _interval(group)
    return {
        "evaluation_id": evaluation_id,
        "kind": kind,
        "name": name,
        "priority": group.get("priority"),
        "verdict": group["verdict"],
        "difference": group.get("difference"),
        "interval_lo": low,
        "interval_hi": high,
        "level": group.get("level"),
        "p_value": group.get("p_value"),
        "q_value": group.get("p_adjusted"),
        "baseline_rate": rates[0],
        "candidate_rate": rates[1],
        "reason": group.get("reason") or group.get("explanation") or "",
    }


def verdict_rows(evaluation_id: str, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per group the summary's comparison decided: the suite, each tag, each case.

    Empty when the evaluation compared no two agents.
    """
    comparison = summary.get("comparison")
    if not comparison:
        return []
    overall = comparison["overall"]
    rows = [
        _verdict_row(
            evaluation_id,
            SUITE,
            "",
            overall,
            (overall.get("baseline_rate"), overall.get("candidate_rate")),
        )
    ]
    rows += [
        _verdict_row(
            evaluation_id, "tag", tag["group"], tag, (tag["baseline_rate"], tag["candidate_rate"])
        )
        for tag in comparison.get("tags") or []
    ]
    rows += [
        _verdict_row(
            evaluation_id,
            "case",
            case["case_id"],
            case,
            (case["baseline"].get("pass_rate"), case["candidate"].get("pass_rate")),
        )
        for case in comparison.get("cases") or []
    ]
    return rows


def write_group_rows(connection: Connection, evaluation_id: str, summary: dict[str, Any]) -> None:
    """Replace an evaluation's `group_rates` and `group_verdicts` rows with the summary's
    (through SQLAlchemy; `evals.store.sqlite_direct` writes the same rows without it)."""
    from sqlalchemy import delete, insert

    from evals.store.schema import group_rates, group_verdicts

    for table, rows in (
        (group_rates, rate_rows(evaluation_id, summary)),
        (group_verdicts, verdict_rows(evaluation_id, summary)),
    ):
        connection.execute(delete(table).where(table.c.evaluation_id == evaluation_id))
        if rows:
            connection.execute(insert(table), rows)
