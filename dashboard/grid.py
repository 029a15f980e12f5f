"""The outputs grid: the cases of a comparison down, the two agents across, each cell the
repeats' verdicts and the first output, unfolding in place to every repeat's output.

Pure functions from stored rows to escaped HTML; every output is shown as text.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from evals.dashboard import theme

MARKS = {"pass": "✓", "fail": "✗", "error": "!"}
FIRST_CHARS = 240

Href = Callable[[str, str, int], str]


def _text(row: dict[str, Any]) -> str:
    text = row["output"] if row["output"] is not None else "(no output)"
    if row.get("error"):
        text += f"\n\nrun error: {row['error']}"
    return str(text)


def _run_link(href: Href, row: dict[str, Any]) -> str:
    return href(row["prompt_id"], row["case_id"], row["repeat"])


def cell_html(
    rows: list[dict[str, Any]], notes: dict[tuple[str, int], list[str]], href: Href
) -> str:
    """One agent's runs of one case: the repeats' verdicts, the first output (cut), any
    annotations, and every repeat's output in full under a `<details>` that opens in
    place."""
    if not rows:
        return "<td><span style='color:#666'>no run stored</span></td>"
    verdicts = "".join(
        f"<span title='repeat {r['repeat'] + 1}: {r['status']}' "
        f"style='color:{theme.hex_colour(r['status'])};font-weight:700'>"
        f"{MARKS.get(r['status'], '?')}</span>"
        for r in rows
    )
    passed = sum(r["status"] == "pass" for r in rows)
    first = _text(rows[0])
    short = first if len(first) <= FIRST_CHARS else first[: FIRST_CHARS - 1] + "…"
    noted = [text for r in rows for text in notes.get((r["prompt_id"], r["repeat"]), [])]
    flags = (
        f"<div class='annotations' style='color:#7a5af5;font-size:0.8rem'>"
        f"{html.escape('; '.join(noted))}</div>"
        if noted
        else ""
    )
    repeats = "".join(
        f"<div style='margin:0.25rem 0'><a href='{html.escape(_run_link(href, r))}' "
        f"target='_self'>repeat {r['repeat'] + 1} {MARKS.get(r['status'], '?')}</a>"
        f"<pre style='white-space:pre-wrap;overflow-wrap:anywhere;margin:0;font-family:inherit'>"
        f"{html.escape(_text(r))}</pre></div>"
        for r in rows
    )
    return (
        f"<td><details><summary><span class='verdicts'>{verdicts}</span> "
        f"<span style='color:#555'>{passed}/{len(rows)} passed</span>"
        f"<div class='first-output' style='white-space:pre-wrap;overflow-wrap:anywhere'>"
        f"{html.escape(short)}</div></summary>{repeats}</details>{flags}</td>"
    )


def grid_html(
    cases: list[dict[str, Any]],
    agents: tuple[str, str],
    outputs: tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]],
    notes: tuple[dict[str, dict[tuple[str, int], list[str]]], ...],
    case_href: Callable[[str], str],
    run_href: tuple[Href, Href],
    marks: Callable[[str], str] = lambda case: "",
) -> str:
    """The grid of `cases` (each with `case`, `verdict`, `description`): a row per case,
    a column per agent (baseline, candidate)."""
    head = (
        "<tr><th style='width:22%'>case</th>"
        + "".join(f"<th style='width:39%'>{html.escape(agent)}</th>" for agent in agents)
        + "</tr>"
    )
    body = []
    for case in cases:
        name = case["case"]
        label = (
            f"<a href='{html.escape(case_href(name))}' target='_self'>{html.escape(name)}</a>"
            f"<div><span class='tag' style='background:{theme.hex_colour(case['verdict'])}'>"
            f"{html.escape(case['verdict'])}</span>{marks(name)}</div>"
            f"<div style='color:#666;font-size:0.85rem'>{html.escape(case['description'])}</div>"
        )
        cells = "".join(
            cell_html(outputs[side].get(name, []), notes[side].get(name, {}), run_href[side])
            for side in (0, 1)
        )
        body.append(f"<tr><td>{label}</td>{cells}</tr>")
    return (
        "<table class='evals-table outputs-grid' style='table-layout:fixed'>"
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
    )
