"""What the user is looking at, shared by every page: suite, environment, compared sides,
case, and each page's filters.

Every choice lives in the page's query string (and in `st.session_state` while moving
between pages), so a link pasted into a pull request opens the same view for a colleague.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from evals.dashboard import data, theme
from evals.dashboard.comparison import ComparisonResult, Side
from evals.model.errors import SuiteError

SUITE = "suite"
ENVIRONMENT = "env"
BASELINE = "baseline"
CANDIDATE = "candidate"
CASE = "case"
REPEAT = "repeat"
# The query-string value of "runs stored without an environment".
NO_ENVIRONMENT = "none"
# A chart point's link names the evaluation to open (`compare?open=<id>`).
OPEN = "open"
# Query parameters that name the view, not one page's filters: they travel between pages.
SHARED = (SUITE, ENVIRONMENT, BASELINE, CANDIDATE)


def side_text(side: Side) -> str:
    """A side as it travels in a query string: `evaluation:agent`."""
    return f"{side.evaluation_id}:{side.agent}"


def parse_side(text: str | None) -> Side | None:
    """The side named by `side_text`, or None when the text is missing or malformed."""
    if not text or ":" not in text:
        return None
    evaluation_id, agent = text.split(":", 1)
    return Side(evaluation_id, agent) if evaluation_id and agent else None


def environment_text(environment: str | None) -> str:
    """An environment as it travels in a query string (`none` for runs without one)."""
    return environment if environment is not None else NO_ENVIRONMENT


def environment_label(environment: str | None) -> str:
    """An environment as pages name it."""
    return environment if environment is not None else "no environment"


def _default_agent(row: dict[str, Any], preferred: str | None) -> str:
    agents = list(row.get("agents") or [])
    if preferred in agents:
        return preferred  # type: ignore[return-value]
    return agents[-1] if agents else ""


def default_sides(
    evaluations: list[dict[str, Any]], compared: tuple[str, str] | None
) -> tuple[Side, Side] | None:
    """The comparison a page opens with when the user has chosen none.

    `compared` is the (baseline, candidate) pair the newest evaluation's gates decided on:
    that very comparison opens. An evaluation that compared nothing opens on its candidate
    agent (its last) against the same agent in the newest nightly run on main before it,
    else in the evaluation just before it; a lone evaluation on its first and last agents.
    """
    if not evaluations:
        return None
    newest = evaluations[0]
    if compared is not None:
        return Side(newest["id"], compared[0]), Side(newest["id"], compared[1])
    agents = list(newest.get("agents") or [])
    if len(evaluations) == 1:
        if len(agents) < 2:
            return None
        return Side(newest["id"], agents[0]), Side(newest["id"], agents[-1])
    cand_agent = agents[-1] if agents else ""
    older = evaluations[1:]
    nightly = [e for e in older if e["environment"] == "nightly" and e["git_branch"] == "main"]
    baseline = (nightly or older)[0]
    return (
        Side(baseline["id"], _default_agent(baseline, cand_agent)),
        Side(newest["id"], cand_agent),
    )


def default_suite(suites: list[dict[str, Any]]) -> str:
    """The suite a first visit opens: the most recently evaluated one."""
    return max(suites, key=lambda s: s["last_started_at"] or 0.0)["suite_id"]


def default_environment(environments: list[dict[str, Any]]) -> str | None:
    """The environment a suite opens on: nightly when it has nightly runs, else the
    environment of its newest evaluation."""
    names = [row["environment"] for row in environments]
    return "nightly" if "nightly" in names else names[0]


def keep_param(key: str, value: str | Sequence[str] | None) -> None:
    """Write one query parameter (None or an empty list removes it), only when its value
    changes: each write sends the browser a message that it handles on its main thread
    (it rewrites the address), so a page opened from its permalink sends none."""
    wanted = [] if value is None else [value] if isinstance(value, str) else list(value)
    if st.query_params.get_all(key) == wanted:
        return
    if wanted:
        st.query_params[key] = wanted if len(wanted) > 1 else wanted[0]
    else:
        st.query_params.pop(key, None)


def _wanted(key: str) -> str | None:
    return st.query_params.get(key) or st.session_state.get(key)


def pick_suite() -> str | None:
    """The suite picker in the sidebar; None (after saying why) when the store is empty."""
    url = data.store_url()
    suites = data.suites(url)
    if not suites:
        st.info(
            "The store has no evaluations yet. Run a suite with `evals run SUITE` and "
            "reload this page."
        )
        return None
    names = [row["suite_id"] for row in suites]
    wanted = _wanted(SUITE)
    if wanted not in names:
        wanted = default_suite(suites)
    chosen = st.sidebar.selectbox("Suite", names, index=names.index(wanted), key="suite_picker")
    previous = st.session_state.get(SUITE)
    if previous is not None and chosen != previous:
        for key in (BASELINE, CANDIDATE, CASE, REPEAT, ENVIRONMENT):
            st.session_state.pop(key, None)
            st.query_params.pop(key, None)
        st.session_state.pop("environment_picker", None)
    st.session_state[SUITE] = chosen
    keep_param(SUITE, chosen)
    return chosen


def pick_environment(suite_id: str) -> str | None:
    """The environment picker in the sidebar: pages show one environment at a time."""
    environments = data.environments(data.store_url(), suite_id)
    if not environments:
        return None
    texts = [environment_text(row["environment"]) for row in environments]
    by_text = {environment_text(row["environment"]): row for row in environments}
    wanted = _wanted(ENVIRONMENT)
    if wanted not in texts:
        wanted = environment_text(default_environment(environments))
    chosen = st.sidebar.selectbox(
        "Environment",
        texts,
        index=texts.index(wanted),
        format_func=lambda t: (
            f"{environment_label(by_text[t]['environment'])} · "
            f"{by_text[t]['evaluations']} evaluations"
        ),
        key="environment_picker",
    )
    st.session_state[ENVIRONMENT] = chosen
    keep_param(ENVIRONMENT, chosen)
    return by_text[chosen]["environment"]


def current_environment() -> str | None:
    """The environment chosen in the sidebar (None: runs stored without one)."""
    chosen = st.session_state.get(ENVIRONMENT, NO_ENVIRONMENT)
    return None if chosen == NO_ENVIRONMENT else chosen


def environment_evaluations(suite_id: str) -> list[dict[str, Any]]:
    """The suite's complete evaluations in the chosen environment, newest first."""
    environment = current_environment()
    return [
        e for e in data.evaluations(data.store_url(), suite_id) if e["environment"] == environment
    ]


def stored_pair(evaluation_id: str) -> tuple[str, str] | None:
    """The (baseline, candidate) agents an evaluation compared, if it compared any."""
    stored = data.evaluation(data.store_url(), evaluation_id)
    comparison = ((stored.summary if stored else None) or {}).get("comparison") or {}
    if comparison.get("baseline") and comparison.get("candidate"):
        return comparison["baseline"], comparison["candidate"]
    return None


def gate_sides(evaluations: list[dict[str, Any]]) -> tuple[Side, Side] | None:
    """The comparison the newest of `evaluations` made for its gates (see `default_sides`)."""
    if not evaluations:
        return None
    return default_sides(evaluations, stored_pair(evaluations[0]["id"]))


def _unknown_side(text: str, known: set[str]) -> bool:
    side = parse_side(text)
    return side is None or side.evaluation_id not in known


def current_sides(suite_id: str) -> tuple[Side, Side] | None:
    """The sides chosen on any page (query string first), else the comparison the gates of
    the newest evaluation in the chosen environment made."""
    chosen = (
        parse_side(st.query_params.get(BASELINE)) or st.session_state.get(BASELINE),
        parse_side(st.query_params.get(CANDIDATE)) or st.session_state.get(CANDIDATE),
    )
    evaluations = data.evaluations(data.store_url(), suite_id)
    known = {e["id"] for e in evaluations}
    if all(side is not None and side.evaluation_id in known for side in chosen):
        return chosen  # type: ignore[return-value]
    stale = [
        text
        for text in (st.query_params.get(BASELINE), st.query_params.get(CANDIDATE))
        if text and _unknown_side(text, known)
    ]
    fallback = gate_sides(environment_evaluations(suite_id) or evaluations)
    if stale and fallback is not None:
        st.warning(
            f"This address names {', '.join(stale)}, which this suite's store does not hold "
            "(pruned, or from another store): showing the newest evaluation's own comparison "
            f"instead, {side_text(fallback[0])} → {side_text(fallback[1])}.",
            icon="⚠️",
        )
    return fallback


def remember_sides(baseline: Side, candidate: Side) -> None:
    """Make a comparison the current one for every page and for the page's link."""
    st.session_state[BASELINE] = baseline
    st.session_state[CANDIDATE] = candidate
    keep_param(BASELINE, side_text(baseline))
    keep_param(CANDIDATE, side_text(candidate))


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


def view_params(**extra: str) -> dict[str, str]:
    """The query string of the current view (suite, environment, sides) plus `extra`,
    for links to another page."""
    params = {key: st.query_params[key] for key in SHARED if key in st.query_params}
    return {**params, **extra}


def sides_params(baseline: Side, candidate: Side, **extra: str) -> dict[str, str]:
    """The query string of a view of one comparison."""
    return view_params(**{BASELINE: side_text(baseline), CANDIDATE: side_text(candidate)}, **extra)


def parse_metadata(text: str) -> list[tuple[str, str]]:
    """`key=value` pairs separated by commas (`priority=P0, model=gpt-4o`) as (key, value).

    Raises ValueError naming the piece that is not `key=value` or whose key is empty or
    holds a double quote."""
    pairs = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        key, equals, value = piece.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not key or '"' in key:
            raise ValueError(
                f"'{piece}' is not key=value: write metadata filters as key=value, separated "
                "by commas, with a key that holds no double quote"
            )
        pairs.append((key, value))
    return pairs


def picked_evaluation(event: Any, name: str) -> str | None:
    """The evaluation of the point a chart's selection `name` holds, if one was clicked."""
    points = (getattr(event, "selection", None) or {}).get(name) or []
    return next((p["evaluation"] for p in points if p.get("evaluation")), None)


def open_evaluation(evaluation_id: str, case_id: str | None = None, **extra: str) -> None:
    """Go to an evaluation's own comparison (its Case page for `case_id`) on Compare, or to
    its runs when it compared no two agents; `extra` adds to the query string."""
    listed = {e["id"]: e for e in data.evaluations(data.store_url(), st.session_state[SUITE])}
    agents = list((listed.get(evaluation_id) or {}).get("agents") or [])
    pair = stored_pair(evaluation_id) or ((agents[0], agents[-1]) if len(agents) > 1 else None)
    if pair is None:
        st.switch_page("views/runs.py", query_params=view_params(evaluation=evaluation_id))
    baseline, candidate = Side(evaluation_id, pair[0]), Side(evaluation_id, pair[1])
    remember_sides(baseline, candidate)
    if case_id is not None:
        st.switch_page(
            "views/case.py", query_params=sides_params(baseline, candidate, **{CASE: case_id})
        )
    st.switch_page("views/compare.py", query_params=sides_params(baseline, candidate, **extra))


def link(page: str, params: dict[str, str]) -> str:
    """The address of another page of the dashboard with `params` as its query string,
    relative to the current page, for links in HTML and SVG (same tab)."""
    return f"{page}?{urlencode(params)}" if params else page


def open_link(evaluation_id: str, **extra: str) -> str:
    """A link that opens an evaluation as a click on its chart point does: its own
    comparison on Compare (the Case page when `extra` names a `case`); see `follow_open`."""
    params = {k: v for k, v in view_params().items() if k not in (BASELINE, CANDIDATE)}
    return link("compare", {**params, OPEN: evaluation_id, **extra})


def follow_open() -> None:
    """Where the address names `open=<evaluation>` (an `open_link`), go to what it opens:
    that evaluation's comparison, filtered by the link's `tag`, or its `case`."""
    opened = st.query_params.get(OPEN)
    if not opened:
        return
    case_id = st.query_params.get(CASE)
    extra = {"tag": st.query_params["tag"]} if "tag" in st.query_params else {}
    for key in (OPEN, CASE, "tag"):
        st.query_params.pop(key, None)
    open_evaluation(opened, case_id, **extra)


def url_list(key: str) -> list[str]:
    """A list kept in the query string as repeated values (`?tag=a&tag=b`)."""
    return [v for v in st.query_params.get_all(key) if v]


def list_filter(
    widget: Callable[..., Any], label: str, options: Sequence[str], key: str, **kwargs: Any
) -> list[str]:
    """A multiselect-like widget whose choice is kept in the query string under `key`."""
    start = [v for v in url_list(key) if v in options]
    chosen = widget(label, list(options), default=start, key=f"filter_{key}", **kwargs)
    keep_param(key, list(chosen))
    return list(chosen)


def text_filter(label: str, key: str, **kwargs: Any) -> str:
    """A text input kept in the query string under `key`."""
    value = st.text_input(label, value=st.query_params.get(key, ""), key=f"filter_{key}", **kwargs)
    keep_param(key, value or None)
    return value


def date_filter(label: str, key: str) -> date | None:
    """A date input kept in the query string under `key` (ISO `YYYY-MM-DD`); an
    unreadable date in the address is left out."""
    try:
        start = date.fromisoformat(st.query_params.get(key, ""))
    except ValueError:
        start = None
    value = st.date_input(label, value=start, key=f"filter_{key}")
    chosen = value if isinstance(value, date) else None
    keep_param(key, chosen.isoformat() if chosen else None)
    return chosen


def flag_filter(label: str, key: str, **kwargs: Any) -> bool:
    """A toggle kept in the query string under `key` (`1` when on)."""
    value = st.toggle(label, value=st.query_params.get(key) == "1", key=f"filter_{key}", **kwargs)
    keep_param(key, "1" if value else None)
    return value


def evaluation_picker(
    label: str, evaluations: list[dict[str, Any]], chosen_id: str, key: str
) -> dict[str, Any]:
    """A selectbox over evaluations, starting at `chosen_id`; returns the chosen row."""
    ids = [e["id"] for e in evaluations]
    by_id = {e["id"]: e for e in evaluations}
    if chosen_id not in by_id:
        st.warning(
            f"This address names evaluation {chosen_id!r}, which is not among this suite's "
            "complete evaluations here (pruned, still running, or from another store): "
            "showing the newest instead.",
            icon="⚠️",
        )
    picked = st.selectbox(
        label,
        ids,
        index=ids.index(chosen_id) if chosen_id in ids else 0,
        format_func=lambda i: theme.evaluation_label(by_id[i]),
        key=key,
    )
    return by_id[picked]
