"""What the user is looking at, shared by every page: the suite and the compared sides.

Choices live in `st.session_state` and in the page's query string, so a link to a
comparison or a case opens the same view for a colleague.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from evals.dashboard import data, theme
from evals.dashboard.comparison import ComparisonResult, Side
from evals.model.errors import SuiteError

SUITE = "suite"
BASELINE = "baseline"
CANDIDATE = "candidate"
CASE = "case"


def side_text(side: Side) -> str:
    """A side as it travels in a query string: `evaluation:agent`."""
    return f"{side.evaluation_id}:{side.agent}"


def parse_side(text: str | None) -> Side | None:
    """The side named by `side_text`, or None when the text is missing or malformed."""
    if not text or ":" not in text:
        return None
    evaluation_id, agent = text.split(":", 1)
    return Side(evaluation_id, agent) if evaluation_id and agent else None


def _default_agent(row: dict[str, Any], preferred: str | None) -> str:
    agents = list(row.get("agents") or [])
    if preferred in agents:
        return preferred  # type: ignore[return-value]
    return agents[-1] if agents else ""


def default_sides(
    evaluations: list[dict[str, Any]], compared: tuple[str, str] | None
) -> tuple[Side, Side] | None:
    """The comparison a page opens with when the user has chosen none.

    With one evaluation: its baseline and candidate agents (`compared`, else its first
    and last agent). With more: the candidate agent of the newest evaluation against the
    same agent in the newest nightly run on main before it, else the one just before it.
    """
    if not evaluations:
        return None
    newest = evaluations[0]
    base_agent, cand_agent = compared or (
        (newest["agents"][0], newest["agents"][-1]) if newest.get("agents") else ("", "")
    )
    if len(evaluations) == 1:
        if base_agent == cand_agent:
            return None
        return Side(newest["id"], base_agent), Side(newest["id"], cand_agent)
    older = evaluations[1:]
    nightly = [e for e in older if e["environment"] == "nightly" and e["git_branch"] == "main"]
    baseline = (nightly or older)[0]
    return (
        Side(baseline["id"], _default_agent(baseline, cand_agent)),
        Side(newest["id"], _default_agent(newest, cand_agent)),
    )


def pick_suite() -> str | None:
    """The suite picker in the sidebar; None (after saying why) when the store is empty."""
    suites = data.suites(data.store_url())
    if not suites:
        st.info(
            "The store has no evaluations yet. Run a suite with `evals run SUITE` and "
            "reload this page."
        )
        return None
    names = [row["suite_id"] for row in suites]
    wanted = st.query_params.get(SUITE) or st.session_state.get(SUITE)
    index = names.index(wanted) if wanted in names else 0
    chosen = st.sidebar.selectbox("Suite", names, index=index, key="suite_picker")
    st.session_state[SUITE] = chosen
    st.query_params[SUITE] = chosen
    return chosen


def stored_pair(evaluation_id: str) -> tuple[str, str] | None:
    """The (baseline, candidate) agents an evaluation compared, if it compared any."""
    stored = data.evaluation(data.store_url(), evaluation_id)
    comparison = ((stored.summary if stored else None) or {}).get("comparison") or {}
    if comparison.get("baseline") and comparison.get("candidate"):
        return comparison["baseline"], comparison["candidate"]
    return None


def current_sides(suite_id: str) -> tuple[Side, Side] | None:
    """The sides chosen on any page (query string first), else the default comparison."""
    chosen = (
        parse_side(st.query_params.get(BASELINE)) or st.session_state.get(BASELINE),
        parse_side(st.query_params.get(CANDIDATE)) or st.session_state.get(CANDIDATE),
    )
    evaluations = data.evaluations(data.store_url(), suite_id)
    known = {e["id"] for e in evaluations}
    if all(side is not None and side.evaluation_id in known for side in chosen):
        return chosen  # type: ignore[return-value]
    if not evaluations:
        return None
    return default_sides(evaluations, stored_pair(evaluations[0]["id"]))


def remember_sides(baseline: Side, candidate: Side) -> None:
    """Make a comparison the current one for every page and for the page's link."""
    st.session_state[BASELINE] = baseline
    st.session_state[CANDIDATE] = candidate
    st.query_params[BASELINE] = side_text(baseline)
    st.query_params[CANDIDATE] = side_text(candidate)


def compare_or_stop(
    url: str, baseline: Side, candidate: Side, environment: str | None
) -> ComparisonResult:
    """Make the comparison current and return it; a suite error stops the page with its fix."""
    remember_sides(baseline, candidate)
    try:
        return data.comparison(url, baseline, candidate, environment)
    except SuiteError as error:
        st.error(f"{error}\n\n{getattr(error, 'fix', '')}")
        st.stop()


def evaluation_picker(
    label: str, evaluations: list[dict[str, Any]], chosen_id: str, key: str
) -> dict[str, Any]:
    """A selectbox over evaluations, starting at `chosen_id`; returns the chosen row."""
    ids = [e["id"] for e in evaluations]
    by_id = {e["id"]: e for e in evaluations}
    picked = st.selectbox(
        label,
        ids,
        index=ids.index(chosen_id) if chosen_id in ids else 0,
        format_func=lambda i: theme.evaluation_label(by_id[i]),
        key=key,
    )
    return by_id[picked]
