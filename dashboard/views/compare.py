"""Compare: candidate against baseline, by suite, tag and case, with the gates' reasons.

Opens on the comparison the newest evaluation's gates made. Regressed cases come first,
each with its failing assertion and a link to its case; every filter is kept in the
query string, so the page's address reproduces the view.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evals.dashboard import (
    badges,
    changes,
    data,
    figures,
    frames,
    paged,
    selection,
    svg,
    theme,
    triage,
    widgets,
)
from evals.dashboard.comparison import Side
from evals.model.summary import AdaptiveSummary

TWO_EVALUATIONS = "two evaluations"
ONE_EVALUATION = "two agents of one evaluation"
SHOWN_LINKS = 10
FOREST_TITLE = (
    "Pass-rate difference (candidate − baseline), suite at the confidence level, "
    "tags at their Holm level"
)
SORTS = [
    paged.Sort("evidence", ()),
    paged.Sort("case", (("case", True),)),
    paged.Sort("difference", (("difference", True),)),
    paged.Sort("q", (("p_adjusted", True), ("p_value", True))),
]
# Filters drawn on demand: their address key and label.
MORE_FILTERS = {"priority": "Priority", "tag": "Tags", "grader": "Assertion type"}
# Rows by verdict under every order: what needs a look first.
VERDICT_RANK = {"regression": 0, "improvement": 1}


selection.follow_open()
url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header(
    "Compare",
    "Is the candidate better or worse than the baseline? Differences with intervals, "
    "the cases with the strongest evidence first.",
)

evaluations = data.evaluations(url, suite_id)
current = selection.current_sides(suite_id)
if current is None:
    widgets.no_data("This suite needs two agents or two complete evaluations to compare.")
    st.stop()
baseline, candidate = current
by_id = {e["id"]: e for e in evaluations}

# The pickers of other sides (a hundred evaluations are a hundred options built in the
# browser) are drawn on demand; the sides themselves are in the address either way.
if st.toggle("Choose what to compare", key="compare_choose"):
    with st.container(border=True):
        same = baseline.evaluation_id == candidate.evaluation_id
        mode = st.radio(
            "Compare",
            [ONE_EVALUATION, TWO_EVALUATIONS],
            index=0 if same or len(evaluations) < 2 else 1,
            horizontal=True,
            key="compare_mode",
        )
        left, right = st.columns(2)
        if mode == ONE_EVALUATION:
            with left:
                chosen = selection.evaluation_picker(
                    "Evaluation", evaluations, candidate.evaluation_id, "compare_one"
                )
            agents = list(chosen["agents"] or [])
            pair = selection.stored_pair(chosen["id"]) or (agents[0], agents[-1])
            with right:
                a, b = st.columns(2)
                base_agent = a.selectbox(
                    "Baseline agent", agents, index=agents.index(pair[0]), key="compare_base_agent"
                )
                cand_agent = b.selectbox(
                    "Candidate agent", agents, index=agents.index(pair[1]), key="compare_cand_agent"
                )
            baseline, candidate = Side(chosen["id"], base_agent), Side(chosen["id"], cand_agent)
        else:
            sides = []
            for column, role, side in (
                (left, "Baseline", baseline),
                (right, "Candidate", candidate),
            ):
                with column:
                    chosen = selection.evaluation_picker(
                        f"{role} evaluation", evaluations, side.evaluation_id, f"compare_{role}"
                    )
                    agents = list(chosen["agents"] or [])
                    agent = st.selectbox(
                        f"{role} agent",
                        agents,
                        index=agents.index(side.agent) if side.agent in agents else len(agents) - 1,
                        key=f"compare_{role}_agent",
                    )
                    sides.append(Side(chosen["id"], agent))
            baseline, candidate = sides

environment = by_id[candidate.evaluation_id]["environment"]
result = selection.compare_or_stop(url, baseline, candidate, environment)

summary, gates = result.summary, result.gates
comparison = summary.get("comparison")
if comparison is None:
    widgets.no_data("These runs share no case, so there is nothing to compare.")
    st.stop()
overall = comparison["overall"]
for warning in gates.get("warnings", []):
    st.warning(warning, icon="⚠️")

difference = overall["difference"]
# What is compared, the figures, the gates and the forest plot go out as one HTML block.
block = [
    widgets.heading_html(
        "",
        f"Baseline: {selection.side_text(baseline)} · "
        f"Candidate: {selection.side_text(candidate)} · "
        + (
            "statistics recomputed from the stored runs"
            if result.recomputed
            else "statistics as stored"
        ),
    ),
    widgets.tiles_html(
        [
            ("Baseline pass rate", theme.percent(overall["baseline_rate"]), ""),
            ("Candidate pass rate", theme.percent(overall["candidate_rate"]), ""),
            (
                "Difference",
                theme.points(difference),
                "candidate − baseline, percentage points",
            ),
            ("Difference interval (pp)", theme.interval_text(overall["interval"]), ""),
            (
                "Gates",
                gates.get("verdict", "—"),
                f"an undetermined verdict: on_undetermined {gates.get('on_undetermined', 'warn')}",
            ),
        ]
    ),
    widgets.badges_html([(f"suite: {overall['verdict']}", overall["verdict"])]),
    widgets.heading_html("", overall.get("explanation", "")),
]
gate_table = frames.gate_frame(gates)
if gate_table.empty:
    block.append(widgets.heading_html("Gates", "The suite defines no gates."))
else:
    block.append(widgets.heading_html("Gates", ""))
    gate_table["blocking"] = gate_table["blocking"].map({True: "yes", False: "no"})
    for field in ("measured", "threshold", "fail_limit", "pass_limit"):
        gate_table[field] = gate_table[field].map(
            lambda v: "" if v is None or pd.isna(v) else f"{v:.3f}"
        )
    block.append(
        widgets.table_html(
            gate_table[["gate", "status", "blocking", "measured", "threshold", "reason"]],
            tinted=["status"],
        )
    )
if gates.get("adaptive"):
    block.append(widgets.heading_html("", AdaptiveSummary.from_dict(gates["adaptive"]).describe()))

forest = frames.forest_frame(comparison).dropna(subset=["difference"])


def _tag_link(group: str) -> str | None:
    if not group.startswith("tag "):
        return None
    return selection.link("compare", selection.sides_params(baseline, candidate, tag=group[4:]))


if forest.empty:
    block.append(
        widgets.heading_html(
            "Suite and tags", "No group of this comparison has a difference to show."
        )
    )
    svg.draw(*block)
else:
    block.append(
        widgets.heading_html("Suite and tags", "A tag's diamond lists that tag's cases below.")
    )
    svg.draw(*block, svg.forest(forest, title=FOREST_TITLE, href=_tag_link))

    def forest_chart() -> None:
        st.vega_lite_chart(figures.forest(url, baseline, candidate, environment), width="stretch")

    widgets.on_demand("Interactive chart", "compare_forest_chart", forest_chart)

st.subheader("Cases: regressions first")
failing = changes.failing_assertion_text(
    data.failing_assertions(url, candidate.evaluation_id, candidate.agent)
)
cases = frames.case_table(
    comparison, data.case_assertion_types(url, candidate.evaluation_id), failing
)
verdict_column, search_column, more_column = st.columns([2, 2, 2], vertical_alignment="bottom")
verdict_filter = selection.list_filter(
    verdict_column.multiselect,
    "Verdict",
    [v for v in theme.VERDICT_ORDER if v in set(cases["verdict"])],
    "verdict",
)
with search_column:
    search = selection.text_filter(
        "Search", "q", placeholder="case id, description or failing assertion"
    )
# Priority, tag and assertion type filters are drawn on demand (each picker is dozens of
# components in the browser); an address that names one opens with them drawn. Turned
# off, they filter nothing.
more = more_column.toggle(
    "Filter by priority, tag, assertion type",
    value=any(selection.url_list(key) for key in MORE_FILTERS),
    key="compare_more_filters",
)
wanted: dict[str, list[str]] = {key: [] for key in MORE_FILTERS}
if more:
    options = {
        "priority": sorted((p for p in set(cases["priority"]) if p), key=frames.priority_rank),
        "tag": sorted({t for tags in cases["tags"] for t in tags}),
        "grader": sorted({g for graders in cases["graders"] for g in graders}),
    }
    for column, (key, label) in zip(st.columns(3), MORE_FILTERS.items(), strict=True):
        wanted[key] = selection.list_filter(column.multiselect, label, options[key], key)
else:
    for key in MORE_FILTERS:
        selection.keep_param(key, None)
shown = frames.search_cases(
    frames.filter_cases(
        cases,
        tags=wanted["tag"],
        priorities=wanted["priority"],
        graders=wanted["grader"],
        verdicts=verdict_filter,
    ),
    search,
).reset_index(drop=True)
counts = shown["verdict"].value_counts()
st.html(
    widgets.badges_html(
        [
            (f"{word}: {int(counts.get(word, 0))}", word)
            for word in ["regression", "improvement", "inconclusive", "equivalent"]
        ]
    )
)


def _case_params(case_id: str) -> dict[str, str]:
    return selection.sides_params(baseline, candidate, **{selection.CASE: case_id})


marks = badges.case_marks(triage.current(url, suite_id), environment)
shown["triage"] = [badges.marks_text(marks.get(case, [])) for case in shown["case"]]
regressed = shown[shown["verdict"] == "regression"]
if not regressed.empty:
    with st.container(border=True):
        st.markdown(f"**Regressed cases ({len(regressed)})**: open one")
        for row in regressed.head(SHOWN_LINKS).to_dict("records"):
            label = f"{row['case']}" + (f" · {row['priority']}" if row["priority"] else "")
            if row["triage"]:
                label += f" [{row['triage']}]"
            if row["failing_assertion"]:
                label += f" — {row['failing_assertion'][:120]}"
            st.page_link(
                "views/case.py",
                label=label,
                icon=":material/error:",
                query_params=_case_params(row["case"]),
            )
        if len(regressed) > SHOWN_LINKS:
            st.caption(f"{len(regressed) - SHOWN_LINKS} more in the table below.")

shown["verdict_rank"] = shown["verdict"].map(lambda v: VERDICT_RANK.get(v, 2))
shown["interval"] = [
    "" if pd.isna(lo) or pd.isna(hi) else f"{lo * 100:+.1f} to {hi * 100:+.1f} pp"
    for lo, hi in zip(shown["low"], shown["high"], strict=True)
]
paged.draw(
    shown,
    [
        paged.Column("verdict", "verdict", tinted=True),
        paged.Column(
            "case",
            "case",
            href=lambda row: selection.link("case", _case_params(row["case"])),
        ),
        paged.Column("priority", "priority"),
        paged.Column("triage", "triage"),
        paged.Column("failing_assertion", "failing assertion"),
        paged.Column("baseline", "baseline", theme.percent),
        paged.Column("candidate", "candidate", theme.percent),
        paged.Column("difference", "difference", theme.points),
        paged.Column("interval", "interval"),
        paged.Column("p_adjusted", theme.q_label("case"), theme.q_text),
        paged.Column("reason", "why this verdict"),
    ],
    noun="cases",
    key="compare_cases",
    sorts=SORTS,
    first="verdict_rank",
)
exported = shown.drop(columns=["tags", "graders", "verdict_rank", "interval"]).assign(
    tags=shown["tags"].map(", ".join),
    graders=shown["graders"].map(", ".join),
    # Differences in percentage points, as every page writes them.
    difference=shown["difference"] * 100,
    low=shown["low"] * 100,
    high=shown["high"] * 100,
)


def full_table() -> None:
    st.caption("Select a row to open its case.")
    picked = st.dataframe(
        exported,
        width="stretch",
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="compare_cases",
        column_order=[
            "verdict",
            "case",
            "priority",
            "failing_assertion",
            "baseline",
            "candidate",
            "difference",
            "low",
            "high",
            "level",
            "p_adjusted",
            "p_value",
            "tags",
            "reason",
        ],
        column_config={
            "verdict": widgets.tinted_column(exported, "verdict"),
            "case": st.column_config.TextColumn("case", pinned=True),
            "failing_assertion": st.column_config.TextColumn("failing assertion", width="large"),
            "baseline": st.column_config.NumberColumn("baseline", format="percent"),
            "candidate": st.column_config.NumberColumn("candidate", format="percent"),
            "difference": st.column_config.NumberColumn("difference (pp)", format="%+.1f"),
            "low": st.column_config.NumberColumn("interval low (pp)", format="%+.1f"),
            "high": st.column_config.NumberColumn("interval high (pp)", format="%+.1f"),
            "p_value": st.column_config.NumberColumn("p", format="%.3g"),
            "p_adjusted": st.column_config.NumberColumn(theme.q_label("case"), format="%.3g"),
            "level": st.column_config.NumberColumn("interval level", format="percent"),
            "reason": st.column_config.TextColumn("why this verdict", width="large"),
        },
    )
    rows = picked.selection.rows if picked else []
    if rows:
        st.switch_page("views/case.py", query_params=_case_params(exported.iloc[rows[0]]["case"]))
    widgets.export(exported, f"{suite_id}-compare", "compare_cases")


widgets.on_demand(
    "Every column, sortable, with CSV and JSON downloads", "compare_full_table", full_table
)
