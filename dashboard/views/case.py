"""Case: why one case fails, first; then one repeat at a time, two runs side by side.

The candidate's failing assertion and its full reason open the page. Below, one repeat is
rendered at a time (the first one the candidate failed, unless the address names one):
its output beside the baseline's of the same repeat, or beside another candidate repeat,
with the words that differ highlighted; then both trajectories as timelines.

Agent output, arguments, results and errors are shown as escaped text, never rendered as
Markdown or HTML: an agent's answer cannot restyle or script the page.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import streamlit as st

from evals.dashboard import (
    auth,
    badges,
    data,
    diffs,
    figures,
    frames,
    selection,
    spans,
    svg,
    theme,
    triage,
    widgets,
)
from evals.dashboard.comparison import Side
from evals.model.errors import SuiteError
from evals.model.results import RunRecord
from evals.reports.conversation import conversation_html

BASELINE_REPEAT = "baseline, same repeat"
OTHER_REPEAT = "another candidate repeat"
AGAINST = "against"
OTHER = "other"
MARKS = {"pass": "✓", "fail": "✗", "error": "!"}

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header("Case", "Why this case fails, then its runs one repeat at a time, side by side.")

current = selection.current_sides(suite_id)
if current is None:
    widgets.no_data("This suite needs two agents or two complete evaluations to compare.")
    st.stop()
baseline, candidate = current
evaluations = {e["id"]: e for e in data.evaluations(url, suite_id)}
environment = evaluations[candidate.evaluation_id]["environment"]
result = selection.compare_or_stop(url, baseline, candidate, environment)
comparison = result.summary.get("comparison") or {"cases": []}
ordered = frames.case_table(comparison, [])
if ordered.empty:
    widgets.no_data("These runs share no case.")
    st.stop()
compared = {case["case_id"]: case for case in comparison["cases"]}
case_ids = list(ordered["case"])
addressed = st.query_params.get(selection.CASE)
if addressed and addressed not in case_ids:
    # A stale or mistyped link: say so, and open nothing else in its place.
    st.error(
        f"This address names case {addressed!r}, which the comparison "
        f"{selection.side_text(baseline)} → {selection.side_text(candidate)} does not hold "
        "(the case may have been renamed or removed from the suite, or the link mistyped)."
    )
    st.page_link(
        "views/compare.py",
        label="The comparison's cases",
        icon=":material/compare_arrows:",
        query_params=selection.sides_params(baseline, candidate),
    )
    st.stop()
marks = badges.case_marks(triage.current(url, suite_id), environment)
wanted = addressed or st.session_state.get(selection.CASE)
if wanted != st.session_state.get(selection.CASE):
    st.session_state.pop("case_picker", None)
case_id = st.selectbox(
    "Case",
    case_ids,
    index=case_ids.index(wanted) if wanted in case_ids else 0,
    format_func=lambda c: f"{compared[c]['verdict']} · " + badges.option_label(c, marks.get(c, [])),
    key="case_picker",
)
if st.session_state.get(selection.CASE) not in (None, case_id):
    selection.keep_param(selection.REPEAT, None)
    selection.keep_param(OTHER, None)
st.session_state[selection.CASE] = case_id
selection.keep_param(selection.CASE, case_id)
case = compared[case_id]


def _outcomes(side: Side) -> list[dict[str, Any]]:
    rows = data.case_outcomes(url, side.evaluation_id, case_id)
    return [row for row in rows if row["agent"] == side.agent]


def _note(text: str) -> str:
    return f"<p style='color:#666'>{html.escape(text)}</p>"


base_rows, cand_rows = _outcomes(baseline), _outcomes(candidate)
failed = [row for row in cand_rows if row["status"] != "pass"]

details = []
if case.get("priority"):
    details.append(f"priority {case['priority']}")
if case.get("tags"):
    details.append("tags " + ", ".join(case["tags"]))
if case.get("interval"):
    details.append(f"difference interval {theme.interval_text(case['interval'])} {theme.POINTS}")
# The case's card and why the candidate fails, each drawn as one block.
st.html(
    "<div style='border:1px solid rgba(49,51,63,0.2);border-radius:0.5rem;padding:1rem'>"
    + widgets.badge_html(case["verdict"])
    + badges.marks_html(marks.get(case_id, []))
    + f"<p style='white-space:pre-wrap;margin:0.5rem 0'>{html.escape(case['description'])}</p>"
    + widgets.tiles_html(
        [
            (
                "Baseline pass rate",
                theme.percent(case["baseline"]["pass_rate"], 0),
                f"{baseline.agent} in {baseline.evaluation_id}",
            ),
            (
                "Candidate pass rate",
                theme.percent(case["candidate"]["pass_rate"], 0),
                f"{candidate.agent} in {candidate.evaluation_id}",
            ),
            (
                "q (BH)",
                theme.q_text(case["p_adjusted"]),
                "p-value of the difference, adjusted over the suite's cases (Benjamini-Hochberg)",
            ),
        ]
    )
    + f"<p style='margin:0.5rem 0 0'>{html.escape(' · '.join(details))}</p>"
    + (_note(case["reason"]) if case.get("reason") else "")
    + "</div>"
)

if not failed:
    st.subheader("Why the candidate fails")
    widgets.no_data(f"Every run of {candidate.agent} on this case passed.")
else:
    grouped: dict[tuple[str, str], list[int]] = {}
    for row in failed:
        label = row["failed_type"] or f"run error ({row['error_kind'] or 'error'})"
        grouped.setdefault((label, row["failed_reason"] or ""), []).append(row["repeat"] + 1)
    reasons = pd.DataFrame(
        [
            {
                "failing assertion": label,
                "repeats": ", ".join(str(r) for r in repeats),
                "reason": reason,
            }
            for (label, reason), repeats in grouped.items()
        ]
    )
    (label, reason), repeats = next(iter(grouped.items()))
    st.html(
        widgets.heading_html("Why the candidate fails")
        + f"<p><b>Failing assertion: <code>{html.escape(label)}</code></b> — in {len(failed)} "
        f"of {len(cand_rows)} runs of {html.escape(candidate.agent)}</p>"
        + widgets.table_html(reasons)
    )


def _who(role: str, side: Side) -> str:
    return role if side.agent == role else f"{role} {side.agent}"


def _label(row: dict[str, Any], many_prompts: bool) -> str:
    prompt = f"{row['prompt_id']} · " if many_prompts else ""
    return f"{prompt}repeat {row['repeat'] + 1} {MARKS.get(row['status'], '?')}"


def _run(side: Side, row: dict[str, Any]) -> RunRecord | None:
    return data.run(url, side.evaluation_id, case_id, side.agent, row["prompt_id"], row["repeat"])


if not cand_rows:
    widgets.no_data(f"No run of {candidate.agent} on this case is stored.")
    st.stop()
many = len({row["prompt_id"] for row in cand_rows}) > 1
keys = [f"{row['prompt_id']}:{row['repeat']}" for row in cand_rows]
by_key = dict(zip(keys, cand_rows, strict=True))
default = f"{failed[0]['prompt_id']}:{failed[0]['repeat']}" if failed else keys[0]
chosen_key = st.query_params.get(selection.REPEAT)
if chosen_key not in by_key:
    chosen_key = default
picker = st.columns([3, 2])
with picker[0]:
    chosen_key = st.radio(
        "Candidate repeat (✓ pass, ✗ fail, ! error)",
        keys,
        index=keys.index(chosen_key),
        format_func=lambda k: _label(by_key[k], many),
        horizontal=True,
        key=f"repeat_{case_id}",
    )
selection.keep_param(selection.REPEAT, chosen_key)
with picker[1]:
    against = st.radio(
        "Beside it",
        [BASELINE_REPEAT, OTHER_REPEAT],
        index=1 if st.query_params.get(AGAINST) == OTHER else 0,
        horizontal=True,
        key="case_against",
    )
selection.keep_param(AGAINST, "baseline" if against == BASELINE_REPEAT else OTHER)
chosen = by_key[chosen_key]
right = _run(candidate, chosen)
right_title = f"{_who('candidate', candidate)} · {_label(chosen, many)}"
if against == BASELINE_REPEAT:
    same = [
        r
        for r in base_rows
        if (r["prompt_id"], r["repeat"]) == (chosen["prompt_id"], chosen["repeat"])
    ]
    left_row = same[0] if same else None
    left_side = baseline
    left = _run(baseline, left_row) if left_row else None
    left_title = (
        f"{_who('baseline', baseline)} · {_label(left_row, many)}" if left_row else "baseline"
    )
else:
    others = [k for k in keys if k != chosen_key]
    if not others:
        widgets.no_data("The candidate has a single repeat of this case.")
        st.stop()
    passing = [k for k in others if by_key[k]["status"] == "pass"]
    wanted_other = st.query_params.get(OTHER)
    start = wanted_other if wanted_other in others else (passing or others)[0]
    other_key = st.selectbox(
        "Other repeat",
        others,
        index=others.index(start),
        format_func=lambda k: _label(by_key[k], many),
        key=f"other_{case_id}",
    )
    selection.keep_param(OTHER, other_key)
    left_row = by_key[other_key]
    left_side = candidate
    left = _run(candidate, left_row)
    left_title = f"{_who('candidate', candidate)} · {_label(left_row, many)}"

if right is None or left is None or left_row is None:
    widgets.no_data("One of the two runs is not stored.")
    st.stop()


def _output(record: RunRecord) -> str:
    output = record.response.output
    text = frames.as_text(output) if output is not None else "(no output)"
    if record.error:
        text += f"\n\nrun error ({record.error_kind}): {record.error}"
    return text


def _cost(record: RunRecord) -> str:
    if record.cost_unknown is not None:
        return "cost unknown"
    return "—" if record.cost is None else f"${record.cost:.5f}"


def _facts(record: RunRecord) -> str:
    return (
        f"{record.status} · {record.latency_ms:,.0f} ms · {_cost(record)} · "
        f"{record.total_tokens:,} tokens · {len(record.response.trajectory)} steps · "
        f"stop: {record.response.stop_reason or '—'}"
    )


def _two_columns(parts: list[str]) -> str:
    """Two runs' blocks side by side."""
    return (
        "<div class='two-runs' style='display:flex;gap:1rem;flex-wrap:wrap'>"
        + "".join(
            # min-width 0 and a scroll of its own: a long unbroken value (JSON arguments)
            # never pushes one run's table over the other's.
            "<div class='run-column' style='flex:1 1 0;min-width:min(20rem,100%);"
            f"max-width:100%;overflow-x:auto'>{part}</div>"
            for part in parts
        )
        + "</div>"
    )


def _titled(title: str, body: str) -> str:
    return f"<p><b>{html.escape(title)}</b></p>{body}"


# Conversations (a simulated user's runs): both sides turn by turn, side by side, the
# turns of failed checks highlighted.
if left.is_conversation or right.is_conversation:
    st.html(
        widgets.heading_html("Conversations")
        + _two_columns(
            [
                _titled(title, conversation_html(record))
                for title, record in ((left_title, left), (right_title, right))
            ]
        )
    )

# The two runs' outputs, trajectories and assertions, drawn as one block; the
# trajectories' difference folded (`<details>`).
st.html(
    widgets.heading_html("Outputs")
    + _note(
        f"Similarity by word: {diffs.similarity(_output(left), _output(right)) * 100:.0f} %. "
        "Struck out: only on the left; highlighted: only on the right."
    )
    + diffs.side_by_side_html(
        _output(left),
        _output(right),
        f"{left_title} — {_facts(left)}",
        f"{right_title} — {_facts(right)}",
    )
    + widgets.heading_html("Trajectories")
    + _two_columns(
        [
            _titled(
                title,
                _note("No step recorded.") if timeline.empty else widgets.table_html(timeline),
            )
            for title, record in ((left_title, left), (right_title, right))
            for timeline in [frames.timeline_frame(record)]
        ]
    )
    + "<details><summary>Trajectory difference (calls, arguments and results)</summary>"
    + diffs.side_by_side_html(
        frames.trajectory_text(left), frames.trajectory_text(right), left_title, right_title
    )
    + "</details>"
    + widgets.heading_html("Assertions")
    + _two_columns(
        [
            _titled(
                title,
                (
                    _note("This run has no graded assertion.")
                    if assertions.empty
                    else widgets.table_html(
                        assertions[["assertion", "verdict", "reason"]], tinted=["verdict"]
                    )
                )
                + ("" if record.grade is None else _note(f"Grade: {record.grade.reason}")),
            )
            for title, record in ((left_title, left), (right_title, right))
            for assertions in [frames.assertion_rows(record)]
        ]
    )
)


def timings(shown: tuple[tuple[str, RunRecord, Side, dict[str, Any]], ...]) -> None:
    """Each run's step waterfall, one under the other at the page's width (side by side,
    their labels would shrink below reading size on a laptop), then the steps' timings,
    tokens and cost side by side."""
    svg.draw(
        *(
            drawn
            for title, _, side, row in shown
            for drawn in [
                figures.waterfall(url, side, case_id, row["prompt_id"], row["repeat"], title)
            ]
            if drawn is not None
        )
    )
    for index, (column, (_, record, _, _)) in enumerate(
        zip(st.columns(len(shown)), shown, strict=True)
    ):
        with column:
            st.dataframe(
                frames.step_frame(record),
                hide_index=True,
                width="stretch",
                key=f"steps_{index}",
                column_config={
                    "start_ms": st.column_config.NumberColumn("start (ms)", format="%.1f"),
                    "duration_ms": st.column_config.NumberColumn("duration (ms)", format="%.1f"),
                    "cost": st.column_config.NumberColumn("cost (USD)", format="%.5f"),
                },
            )


shown = ((left_title, left, left_side, left_row), (right_title, right, candidate, chosen))
widgets.on_demand("Timings, tokens and cost per step", "timings", lambda: timings(shown))


def span_trees() -> None:
    """Each run's span tree from its stored trace: model calls with their input messages,
    tool calls with their arguments and results."""
    st.html(
        _two_columns(
            [
                _titled(title, spans.tree_html(record.response.trace))
                for title, record, _, _ in shown
            ]
        )
    )


widgets.on_demand("Span trees (model calls' input messages, tool arguments)", "spans", span_trees)

# People's word on these two runs: their annotations in force, and (for triagers) a form
# to add one. No gate counts an annotation; `evals triage labels` reads them for
# `evals calibrate`.
in_force = triage.current(url, suite_id)
shown_runs = [
    (left_title, left_side, left_row),
    (right_title, candidate, chosen),
]
notes = []
for title, side, row in shown_runs:
    held = triage.run_annotations(in_force, side.evaluation_id, case_id).get(
        (side.agent, row["prompt_id"], row["repeat"]), []
    )
    texts = [triage.annotation_text(a) for a in held] or ["none yet"]
    notes.append(f"<p><b>{html.escape(title)}</b></p>" + _note("\n".join(texts)))
st.html(
    widgets.heading_html(
        "What people said of these runs",
        "Overrides, thumbs and comments, kept in the triage log with who and when. They "
        "change no verdict and no gate; `evals triage labels` turns them into labels for "
        "`evals calibrate`.",
    )
    + _two_columns(notes)
)
person = auth.visitor()
if person.can_triage:
    KINDS = {
        "override:fail": "Override the verdict: fail",
        "override:pass": "Override the verdict: pass",
        "rate:up": "Thumb up",
        "rate:down": "Thumb down",
        "comment:": "Comment",
    }
    with st.form("annotate_form", clear_on_submit=True):
        which = st.radio(
            "Run",
            [0, 1],
            format_func=lambda i: shown_runs[i][0],
            horizontal=True,
            index=1,
            key="annotate_run",
        )
        picked = st.radio(
            "Annotation",
            list(KINDS),
            format_func=KINDS.__getitem__,
            horizontal=True,
            key="annotate_kind",
        )
        said = st.text_input("Why (needed for an override or a comment)", key="annotate_reason")
        if st.form_submit_button("Record annotation", type="primary"):
            kind, _, label = picked.partition(":")
            _, side, row = shown_runs[which]
            try:
                recorded = triage.annotate(
                    person,
                    url,
                    kind,
                    suite_id,
                    said,
                    evaluation_id=side.evaluation_id,
                    case_id=case_id,
                    agent=side.agent,
                    prompt_id=row["prompt_id"],
                    repeat=row["repeat"],
                    label=label or None,
                )
            except SuiteError as error:
                st.error(error.render())
            else:
                st.success(f"Recorded annotation {recorded.id}.")
