"""Case: every repeat of both agents on one case, side by side, down to each tool call.

Agent output, arguments, results and errors are shown as plain text or code, never
rendered as Markdown or HTML: an agent's answer cannot restyle or script the page.
"""

from __future__ import annotations

import streamlit as st

from evals.dashboard import charts, data, frames, selection, theme, widgets
from evals.dashboard.comparison import Side
from evals.model.results import RunRecord
from evals.model.trajectory import Step

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header("Case", "Every repeat of both agents on one case: output, assertions, trajectory.")

current = selection.current_sides(suite_id)
if current is None:
    widgets.no_data("This suite needs two agents or two complete evaluations to compare.")
    st.stop()
baseline, candidate = current
evaluations = {e["id"]: e for e in data.evaluations(url, suite_id)}
environment = evaluations[candidate.evaluation_id]["environment"]
result = selection.compare_or_stop(url, baseline, candidate, environment)
comparison = result.summary.get("comparison") or {"cases": []}
compared = {case["case_id"]: case for case in comparison["cases"]}
case_ids = list(compared)
if not case_ids:
    widgets.no_data("These runs share no case.")
    st.stop()
wanted = st.query_params.get(selection.CASE) or st.session_state.get(selection.CASE)
case_id = st.selectbox(
    "Case",
    case_ids,
    index=case_ids.index(wanted) if wanted in case_ids else 0,
    format_func=lambda c: f"{compared[c]['verdict']} · {c}",
    key="case_picker",
)
st.session_state[selection.CASE] = case_id
st.query_params[selection.CASE] = case_id
case = compared[case_id]

with st.container(border=True):
    top = st.columns([3, 1, 1, 1])
    with top[0]:
        st.text(case["description"])
        widgets.badge(case["verdict"])
    top[1].metric("Baseline pass rate", theme.percent(case["baseline"]["pass_rate"], 0))
    top[2].metric("Candidate pass rate", theme.percent(case["candidate"]["pass_rate"], 0))
    top[3].metric("p (BH)", "—" if case["p_adjusted"] is None else f"{case['p_adjusted']:.3f}")
    details = []
    if case.get("priority"):
        details.append(f"priority {case['priority']}")
    if case.get("tags"):
        details.append("tags " + ", ".join(case["tags"]))
    st.text(" · ".join(details))
    if case.get("why_it_exists"):
        st.text(f"Why it exists: {case['why_it_exists']}")


def _step_heading(number: int, step: Step) -> str:
    parts = [f"step {number:02d}", step.kind, step.name]
    if step.duration_ms is not None:
        parts.append(f"{step.duration_ms:.1f} ms")
    if step.input_tokens is not None or step.output_tokens is not None:
        parts.append(f"{step.input_tokens or 0} in / {step.output_tokens or 0} out tokens")
    if step.cost is not None:
        parts.append(f"${step.cost:.5f}")
    if step.effect:
        parts.append(f"effect {step.effect}")
    if step.approval:
        parts.append(f"approval {step.approval}")
    if step.error:
        parts.append("ERROR")
    return " · ".join(parts)


def _timeline(record: RunRecord) -> None:
    for number, step in enumerate(record.response.trajectory, start=1):
        with st.container(border=True):
            st.text(_step_heading(number, step))
            if step.arguments is not None:
                st.code(frames.as_text(step.arguments), language="json", wrap_lines=True)
            if step.kind == "tool" and step.result is not None:
                st.code(frames.as_text(step.result), language="json", wrap_lines=True)
            if step.error:
                st.code(f"error: {step.error}", language="text", wrap_lines=True)


def _run_card(record: RunRecord, key: str) -> None:
    with st.container(border=True):
        widgets.badge(record.status)
        st.text(
            f"{record.latency_ms:,.0f} ms · ${record.cost:.5f} · {record.total_tokens:,} tokens · "
            f"{len(record.response.trajectory)} steps · stop: {record.response.stop_reason or '—'}"
        )
        st.caption("Final output")
        output = record.response.output
        st.code(
            frames.as_text(output) if output is not None else "(no output)",
            language="text",
            wrap_lines=True,
        )
        if record.error:
            st.caption(f"Run error ({record.error_kind})")
            st.code(record.error, language="text", wrap_lines=True)
        st.caption("Assertions")
        assertions = frames.assertion_rows(record)
        st.dataframe(
            widgets.colour_words(assertions, ["verdict"]),
            hide_index=True,
            width="stretch",
            key=f"{key}_assertions",
        )
        if record.grade is not None:
            st.text(f"Grade: {record.grade.reason}")
        st.caption("Trajectory")
        _timeline(record)
        bars, source = frames.waterfall_frame(record)
        if not bars.empty:
            st.altair_chart(
                charts.waterfall(
                    bars,
                    title="Trace waterfall (ms)"
                    if source == "trace"
                    else "Step waterfall from the trajectory's timings (ms)",
                ),
                width="stretch",
                key=f"{key}_waterfall",
            )
        st.caption("Tokens and cost per step")
        st.dataframe(
            frames.step_frame(record),
            hide_index=True,
            width="stretch",
            key=f"{key}_steps",
            column_config={
                "start_ms": st.column_config.NumberColumn("start (ms)", format="%.1f"),
                "duration_ms": st.column_config.NumberColumn("duration (ms)", format="%.1f"),
                "cost": st.column_config.NumberColumn("cost (USD)", format="%.5f"),
            },
        )


def _runs(side: Side) -> dict[int, RunRecord]:
    return {r.key.repeat: r for r in data.case_runs(url, side.evaluation_id, case_id, side.agent)}


base_runs, cand_runs = _runs(baseline), _runs(candidate)
repeats = sorted(set(base_runs) | set(cand_runs))


def _mark(record: RunRecord | None) -> str:
    return {"pass": "✓", "fail": "✗", "error": "!"}.get(record.status, "?") if record else "–"


tabs = st.tabs(
    [f"repeat {r + 1}  {_mark(base_runs.get(r))} | {_mark(cand_runs.get(r))}" for r in repeats]
)
for tab, repeat in zip(tabs, repeats, strict=True):
    with tab:
        columns = st.columns(2)
        for column, role, side, runs in (
            (columns[0], "baseline", baseline, base_runs),
            (columns[1], "candidate", candidate, cand_runs),
        ):
            with column:
                st.subheader(role if side.agent == role else f"{role}: {side.agent}")
                st.caption(f"evaluation {side.evaluation_id}")
                record = runs.get(repeat)
                if record is None:
                    widgets.no_data(f"No run of repeat {repeat + 1} for the {role}.")
                else:
                    _run_card(record, f"{role}_{repeat}")
