"""The answer to the morning question, as one HTML block that fits a laptop's first view:
which gates failed and on which cases, what regressed and since when, what improved.

Pure functions from the landing page's tables to escaped HTML: each line is short, its
cases and tags are links, and the statistical detail (each gate's full reason, each
change's interval and q) lives one click away on the same page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from evals.dashboard import theme, widgets
from evals.dashboard.history import gate_subjects

# Changes listed in the answer; the rest are in the sections below it.
ANSWER_ROWS = 5
_TAG_GATE = re.compile(r"regression\[(?P<tag>.+)\]")

Href = Callable[[str, str], str]


def link(text: str, address: str) -> str:
    return f'<a href="{html.escape(address)}" target="_self">{html.escape(text)}</a>'


def gate_subject_links(gate: dict[str, Any], cases: list[str], regressed: int, href: Href) -> str:
    """What a failing gate is about, as links: the cases its reason names (the P0 gate),
    its tag (a tag's regression gate), or the regressed cases (the suite's)."""
    named = gate_subjects(gate, cases)
    if named:
        return "cases " + ", ".join(link(name, href("case", name)) for name in named)
    tag = _TAG_GATE.fullmatch(str(gate.get("name")))
    if tag:
        return "tag " + link(tag["tag"], href("tag", tag["tag"]))
    if gate.get("name") == "regression" and regressed:
        return link(f"{regressed} regressed case(s)", href("verdict", "regression"))
    return ""


def gates_html(failing: list[dict[str, Any]], cases: list[str], regressed: int, href: Href) -> str:
    """One line per gate that did not pass: its name, status and what it is about."""
    if not failing:
        return ""
    items = []
    for gate in failing:
        about = gate_subject_links(gate, cases, regressed, href)
        blocking = "" if gate.get("blocking", True) else " (not blocking)"
        items.append(
            f"<li>{widgets.badge_html(gate['status'])} <b>{html.escape(gate['name'])}</b>"
            f"{blocking}{' — ' + about if about else ''}</li>"
        )
    return (
        "<p style='margin:0.5rem 0 0.25rem'><b>Gates that did not pass</b></p>"
        f"<ul style='margin:0 0 0.25rem 1.25rem;padding:0'>{''.join(items)}</ul>"
    )


def since_phrase(row: dict[str, Any]) -> str:
    """`since 2026-03-08 03:00 · commit 782dab3447 (night-04), 7 evaluations`, short."""
    if not row.get("since_evaluation") or pd.isna(row.get("since_evaluation")):
        return ""
    commit = f" · commit {row['since_commit']}" if row["since_commit"] else ""
    streak = int(row["streak"])
    count = "this evaluation only" if streak == 1 else f"{streak} evaluations"
    lead = "since at least" if not row["last_good_evaluation"] and streak > 1 else "since"
    return f"{lead} {row['since']}{commit} ({row['since_evaluation']}), {count}"


def change_line(row: dict[str, Any], href: Href, badges: str = "") -> str:
    """One change in a line: what, rates and difference, since when; the name a link."""
    name = link(row["name"], href(row["kind"], row["name"]))
    priority = f" · {html.escape(row['priority'])}" if row["priority"] else ""
    gate = " · <b>P0 gate failed</b>" if row.get("gate") else ""
    rates = (
        f"{theme.percent(row['baseline'], 0)} → {theme.percent(row['candidate'], 0)} "
        f"({theme.points(row['difference'])})"
    )
    since = since_phrase(row)
    return (
        f"<li>{html.escape(row['kind'])} {name}{priority}{gate}{badges}: {html.escape(rates)}"
        f"{' · ' + html.escape(since) if since else ''}</li>"
    )


def changes_html(
    title: str,
    frame: pd.DataFrame,
    href: Href,
    badges: Callable[[dict[str, Any]], str] = lambda row: "",
) -> str:
    """A heading with the count and the first `ANSWER_ROWS` changes, one line each."""
    if frame.empty:
        return f"<p style='margin:0.5rem 0 0.25rem'><b>{html.escape(title)}: none</b></p>"
    rows = [
        {str(k): v for k, v in row.items()} for row in frame.head(ANSWER_ROWS).to_dict("records")
    ]
    more = len(frame) - len(rows)
    lines = "".join(change_line(row, href, badges(row)) for row in rows)
    tail = f"<li style='list-style:none;color:#555'>{more} more below</li>" if more else ""
    return (
        f"<p style='margin:0.5rem 0 0.25rem'><b>{html.escape(title)} ({len(frame)})</b></p>"
        f"<ul style='margin:0 0 0.25rem 1.25rem;padding:0'>{lines}{tail}</ul>"
    )
