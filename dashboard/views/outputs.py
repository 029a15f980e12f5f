"""Outputs: the answers of a comparison side by side, to read and judge them.

The cases down (regressions first, as on Compare), the baseline and the candidate
across; each cell holds the repeats' verdicts and the first output, and unfolds in place
to every repeat's output, each a link to that run on the Case page, where triagers
annotate it. 25 cases a page; page, verdict filter and search in the address.
"""

from __future__ import annotations

import streamlit as st

from evals.dashboard import badges, data, frames, grid, paged, selection, theme, triage, widgets
from evals.dashboard.comparison import Side

PER_PAGE = 25

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header(
    "Outputs",
    "What each agent answered, case by case: the repeats' verdicts and the first answer; "
    "open a cell for every repeat.",
)
current = selection.current_sides(suite_id)
if current is None:
    widgets.no_data("This suite needs two agents or two complete evaluations to compare.")
    st.stop()
baseline, candidate = current
evaluations = {e["id"]: e for e in data.evaluations(url, suite_id)}
environment = evaluations[candidate.evaluation_id]["environment"]
result = selection.compare_or_stop(url, baseline, candidate, environment)
comparison = result.summary.get("comparison")
if comparison is None:
    widgets.no_data("These runs share no case.")
    st.stop()
cases = frames.case_table(comparison, [])
left, right = st.columns(2)
verdicts = selection.list_filter(
    left.multiselect,
    "Verdict",
    [v for v in theme.VERDICT_ORDER if v in set(cases["verdict"])],
    "verdict",
)
with right:
    search = selection.text_filter("Search", "q", placeholder="case id or description")
shown = frames.search_cases(
    frames.filter_cases(cases, tags=[], priorities=[], graders=[], verdicts=verdicts), search
)
pages = paged.page_count(len(shown), PER_PAGE)
page = paged.clamp_page(st.query_params.get(paged.PAGE), len(shown), PER_PAGE)
if pages > 1:
    page = int(st.number_input("Page", 1, pages, page, key="outputs_page"))
selection.keep_param(paged.PAGE, None if page == 1 else str(page))
rows = shown.iloc[(page - 1) * PER_PAGE : page * PER_PAGE].to_dict("records")
names = tuple(str(row["case"]) for row in rows)
in_force = triage.current(url, suite_id)
marks = badges.case_marks(in_force, environment)


def _by_case(side: Side) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for row in data.case_outputs(url, side.evaluation_id, side.agent, names):
        found.setdefault(str(row["case_id"]), []).append(row)
    return found


def _notes(side: Side) -> dict[str, dict[tuple[str, int], list[str]]]:
    return {
        case: {
            (prompt, repeat): [triage.annotation_text(a) for a in held]
            for (agent, prompt, repeat), held in triage.run_annotations(
                in_force, side.evaluation_id, case
            ).items()
            if agent == side.agent
        }
        for case in names
    }


def _run_href(side: Side) -> grid.Href:
    def href(prompt_id: str, case_id: str, repeat: int) -> str:
        return selection.link(
            "case",
            selection.sides_params(
                baseline,
                candidate,
                **{selection.CASE: case_id, selection.REPEAT: f"{prompt_id}:{repeat}"},
            ),
        )

    return href


st.caption(
    f"cases {(page - 1) * PER_PAGE + 1 if rows else 0:,}–{(page - 1) * PER_PAGE + len(rows):,} "
    f"of {len(shown):,} · page {page} of {pages} · baseline {selection.side_text(baseline)}, "
    f"candidate {selection.side_text(candidate)}"
)
st.html(
    widgets.TABLE_STYLE
    + grid.grid_html(
        [{str(k): v for k, v in row.items()} for row in rows],
        (f"baseline {baseline.agent}", f"candidate {candidate.agent}"),
        (_by_case(baseline), _by_case(candidate)),
        (_notes(baseline), _notes(candidate)),
        lambda case: selection.link(
            "case", selection.sides_params(baseline, candidate, **{selection.CASE: case})
        ),
        (_run_href(baseline), _run_href(candidate)),
        lambda case: badges.marks_html(marks.get(case, [])),
    )
)
