"""What changed in an evaluation: its failing gates, its regressions and improvements with
since when they hold, and its new, removed and errored cases.

Pure functions over what the evaluation stored (summary and gate report dicts) and the
store's listings; they select, rank and join, and never estimate anything.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evals.dashboard.frames import evidence_key, priority_rank
from evals.dashboard.history import P0_GATE, Onset, gate_subjects
from evals.dashboard.theme import points, q_label, q_text, when

CHANGE_COLUMNS = [
    "kind",
    "name",
    "description",
    "priority",
    "verdict",
    "baseline",
    "candidate",
    "difference",
    "low",
    "high",
    "level",
    "q",
    "p",
    "reason",
    "failing_assertion",
    "since",
    "since_commit",
    "since_evaluation",
    "streak",
    "last_good",
    "last_good_commit",
    "last_good_evaluation",
    "last_good_verdict",
    "unclear",
    "redefined",
    "regrouped",
    "gate",
]


def failing_gates(gates: dict[str, Any]) -> list[dict[str, Any]]:
    """The blocking gates that failed, then those undetermined, with their full reasons."""
    order = {"fail": 0, "undetermined": 1}
    chosen = [g for g in gates.get("gates", []) if g.get("status") in order]
    return sorted(chosen, key=lambda g: (order[g["status"]], not g.get("blocking", True)))


def p0_failures(gates: dict[str, Any], cases: list[str]) -> list[str]:
    """The cases the failing P0 gate names: each is a regression to show, whatever its
    own verdict (the P0 gate decides within the P0 cases, the case's verdict across all)."""
    for gate in gates.get("gates", []):
        if gate.get("name") == P0_GATE and gate.get("status") == "fail":
            return gate_subjects(gate, cases)
    return []


def failing_assertion_text(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Per case, its most frequent failed assertion: `type ×n: first reason`, n the runs
    it failed in."""
    text: dict[str, str] = {}
    for row in rows:
        if row["case_id"] in text:
            continue
        label = row["type"] if not row.get("metric") else f"{row['type']} ({row['metric']})"
        runs = "run" if row["failures"] == 1 else "runs"
        text[row["case_id"]] = f"{label} failed in {row['failures']} {runs}: {row['reason']}"
    return text


def _onset_columns(onset: Onset | None) -> dict[str, Any]:
    if onset is None:
        return {}
    last = onset.last_good or {}
    return {
        "since": when(onset.first["started_at"]),
        "since_commit": (onset.first.get("git_commit") or "")[:10],
        "since_evaluation": onset.first["id"],
        "streak": onset.streak,
        "last_good": when(last.get("started_at")) if last else "before the window",
        "last_good_commit": (last.get("git_commit") or "")[:10],
        "last_good_evaluation": last.get("id", ""),
        "last_good_verdict": onset.last_good_verdict or "",
        "unclear": ", ".join(row["id"] for row in onset.unclear),
        "redefined": ", ".join(row["id"] for row in onset.redefined),
        "regrouped": "; ".join(change.text() for change in onset.regrouped),
    }


def changes(
    comparison: dict[str, Any],
    verdict: str,
    onsets: dict[tuple[str, str], Onset],
    failing: dict[str, str],
    gated: list[str] | None = None,
) -> pd.DataFrame:
    """The tags, then the cases, whose verdict is `verdict`: tags by evidence (q, p, size),
    cases by priority then evidence, each with its interval, q, reason, the failing
    assertion (cases) and when the verdict began (`onsets`). `gated` adds the cases a
    failing gate names (the P0 gate's), whatever their own verdict."""
    records = []
    named = set(gated or [])
    tags = sorted(
        (t for t in comparison.get("tags", []) if t["verdict"] == verdict), key=evidence_key
    )
    cases = sorted(
        (
            c
            for c in comparison.get("cases", [])
            if c["verdict"] == verdict or c["case_id"] in named
        ),
        key=lambda c: (priority_rank(c.get("priority")), evidence_key(c)),
    )
    for kind, group in [("tag", t) for t in tags] + [("case", c) for c in cases]:
        name = group["group"] if kind == "tag" else group["case_id"]
        interval = group.get("interval") or (None, None)
        baseline = group.get("baseline_rate") if kind == "tag" else group["baseline"]["pass_rate"]
        candidate = (
            group.get("candidate_rate") if kind == "tag" else group["candidate"]["pass_rate"]
        )
        records.append(
            {
                "kind": kind,
                "name": name,
                "description": group.get("description") or "",
                "priority": group.get("priority") or "",
                "verdict": group["verdict"],
                "baseline": baseline,
                "candidate": candidate,
                "difference": group.get("difference"),
                "low": interval[0],
                "high": interval[1],
                "level": group.get("level"),
                "q": group.get("p_adjusted"),
                "p": group.get("p_value"),
                "reason": group.get("reason") or group.get("explanation") or "",
                "failing_assertion": failing.get(name, "") if kind == "case" else "",
                **_onset_columns(onsets.get((kind, name))),
                "gate": P0_GATE if kind == "case" and name in named else "",
            }
        )
    return pd.DataFrame.from_records(records, columns=CHANGE_COLUMNS)


def case_set_changes(current: list[str], previous: list[str] | None) -> tuple[list[str], list[str]]:
    """(new, removed) case ids of an evaluation against the one before it."""
    if previous is None:
        return [], []
    before, now = set(previous), set(current)
    return sorted(now - before), sorted(before - now)


def errored_cases(rates: list[dict[str, Any]]) -> pd.DataFrame:
    """Cases with errored runs, per agent, most errors first."""
    rows = [
        {"case": r["case_id"], "agent": r["agent"], "errors": r["errors"], "runs": r["runs"]}
        for r in rates
        if r["errors"]
    ]
    frame = pd.DataFrame.from_records(rows, columns=["case", "agent", "errors", "runs"])
    return frame.sort_values(["errors", "case"], ascending=[False, True], ignore_index=True)


def _rate(value: float | None) -> str:
    return "—" if value is None or pd.isna(value) else f"{value * 100:.0f} %"


def _known(value: Any) -> bool:
    return value is not None and not pd.isna(value)


def evidence_text(row: dict[str, Any]) -> str:
    """`90 % → 45 % (−45.0 pp, interval [−60.0, −30.0] pp at 99 %) · q (BH) 0.002` for a
    change."""
    detail = points(row["difference"])
    if _known(row["low"]):
        detail += f", interval [{row['low'] * 100:+.1f}, {row['high'] * 100:+.1f}] pp"
        if _known(row["level"]):
            detail += f" at {row['level'] * 100:.4g} %"
    parts = [f"{_rate(row['baseline'])} → {_rate(row['candidate'])} ({detail})"]
    if _known(row["q"]):
        parts.append(f"{q_label(row['kind'])} {q_text(row['q'])}")
    elif _known(row["p"]):
        parts.append(f"p {q_text(row['p'])}")
    return " · ".join(parts)


def _evaluation(row: dict[str, Any], prefix: str) -> str:
    commit = f" · commit {row[prefix + '_commit']}" if row[prefix + "_commit"] else ""
    return f"{row[prefix]}{commit} ({row[prefix + '_evaluation']})"


def since_text(row: dict[str, Any]) -> str:
    """When a change began, through which unclear evaluations it held, where the case's
    definition changed, and the last evaluation without it, in words."""
    if not row.get("since_evaluation") or pd.isna(row["since_evaluation"]):
        return "no history stored for it"
    first = _evaluation(row, "since")
    streak = int(row["streak"])
    unclear = [u for u in str(row.get("unclear") or "").split(", ") if u]
    runs = "this evaluation only" if streak == 1 else f"{streak} evaluations in a row"
    if unclear:
        runs += f", of which {len(unclear)} inconclusive on their own ({', '.join(unclear)})"
    if not row["last_good_evaluation"]:
        text = (
            f"since at least {first}: in all {streak} evaluations of this suite here"
            + (f", of which {len(unclear)} inconclusive on their own" if unclear else "")
            if streak > 1
            else f"first seen in this evaluation, {first}: no earlier one of this suite here"
        )
    else:
        last = _evaluation(row, "last_good")
        verdict = row["last_good_verdict"]
        if verdict == "absent":
            verdict = "not compared there: not in the suite, or no comparison"
        text = f"since {first}, {runs}; last without it: {last}, {verdict}"
    redefined = str(row.get("redefined") or "")
    if redefined:
        text += f". Its definition (vars, assertions) changed from {redefined} on"
    regrouped = str(row.get("regrouped") or "")
    if regrouped:
        text += f". Its cases changed with the suite: {regrouped}"
    return text
