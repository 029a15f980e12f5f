"""Cached reads of the store for the pages.

Documents of a complete evaluation never change, so everything keyed by evaluation ids is
cached until the server restarts; listings (which grow as runs land) expire after a
minute. The store URL is part of every key, so one server never mixes two stores.

`st.cache_data` hands each caller a copy (it unpickles on every hit). An evaluation's
stored summary and a comparison hold every case of the suite, and copying one took
longer than the rest of a page at 500 cases: those two are kept with `st.cache_resource`,
one object shared by every session, which pages only read.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from evals.dashboard.comparison import ComparisonResult, Side, compare_sides
from evals.model.results import RunRecord
from evals.store import Store, StoredEvaluation, open_viewer_store
from evals.store.dashboard_queries import DashboardQueries
from evals.store.location import resolve_url

LISTING_TTL_S = 60


def store_url() -> str:
    """The store the dashboard reads: $EVALS_STORE_URL, else `.evals/results.db`."""
    return resolve_url(None)


@st.cache_resource(show_spinner=False)
def _store(url: str) -> Store:
    return open_viewer_store(url)


def _queries(url: str) -> DashboardQueries:
    return DashboardQueries(_store(url).engine)


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def suites(url: str) -> list[dict[str, Any]]:
    """Every suite in the store with its evaluation count and last run."""
    return _queries(url).suites()


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def latest_verdicts(url: str) -> list[dict[str, Any]]:
    """The newest complete evaluation of each suite and environment, with its verdict."""
    return _queries(url).latest_verdicts()


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def evaluations(url: str, suite_id: str, complete_only: bool = True) -> list[dict[str, Any]]:
    """The suite's evaluations, newest first."""
    return _queries(url).evaluations(suite_id, complete_only=complete_only)


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def baseline(url: str, suite_id: str, branch: str = "main") -> dict[str, str] | None:
    """The suite's baseline on `branch` (the evaluation pull requests and the nightly
    compare with) and why it is the baseline; None when it has none."""
    store = _store(url)
    found = store.baselines(suite_id, branch=branch)
    if not found:
        return None
    status = store.baseline_statuses(found[:1])[found[0].id]
    return {"id": found[0].id, "reason": status.reason, "branch": branch}


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def trend(url: str, suite_id: str, environment: str | None) -> list[dict[str, Any]]:
    """Per-agent statistics of the suite's recent complete evaluations, oldest first."""
    return _queries(url).trend(suite_id, environment)


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def environments(url: str, suite_id: str) -> list[dict[str, Any]]:
    """The suite's environments with their newest complete evaluation, newest first."""
    return _queries(url).environments(suite_id)


@st.cache_data(show_spinner=False)
def history(
    url: str, suite_id: str, environment: str | None, until: float, names: tuple[str, ...]
) -> dict[str, Any]:
    """Stored verdicts and failed gates of the named cases and tags over the evaluations
    up to `until`, across suite versions (see `DashboardQueries.history`).

    Keyed by the newest evaluation's start, so it never changes once computed."""
    return _queries(url).history(suite_id, environment, until, list(names))


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def group_trend(
    url: str, suite_id: str, environment: str | None, kind: str, name: str
) -> list[dict[str, Any]]:
    """One tag's or case's rates per agent over recent evaluations, oldest first."""
    return _queries(url).group_trend(suite_id, environment, kind, name)


@st.cache_data(show_spinner=False)
def previous_evaluation(
    url: str, suite_id: str, environment: str | None, started_at: float, evaluation_id: str
) -> dict[str, Any] | None:
    """The evaluation of the suite in the environment just before the given one."""
    return _queries(url).previous_evaluation(suite_id, environment, started_at, evaluation_id)


@st.cache_data(show_spinner=False)
def case_rates(url: str, evaluation_id: str) -> list[dict[str, Any]]:
    """Per case and agent of an evaluation: runs, errors and pass rate."""
    return _queries(url).case_rates(evaluation_id)


@st.cache_data(show_spinner=False)
def group_names(url: str, evaluation_id: str) -> dict[str, list[str]]:
    """The tags and cases an evaluation has rates for."""
    return _queries(url).group_names(evaluation_id)


@st.cache_data(show_spinner=False)
def failing_assertions(url: str, evaluation_id: str, agent: str) -> list[dict[str, Any]]:
    """Per case of one agent: the assertions that failed, how often, and a first reason."""
    return _queries(url).failing_assertions(evaluation_id, agent)


@st.cache_data(show_spinner=False)
def case_outcomes(url: str, evaluation_id: str, case_id: str) -> list[dict[str, Any]]:
    """Every run of one case: outcome and first failed assertion, no outputs."""
    return _queries(url).case_outcomes(evaluation_id, case_id)


@st.cache_data(show_spinner=False, max_entries=256)
def run(
    url: str, evaluation_id: str, case_id: str, agent: str, prompt_id: str, repeat: int
) -> RunRecord | None:
    """One stored run with its output, grade and trajectory, or None when not stored."""
    found = _store(url).load_runs(evaluation_id, case_id=case_id, agent=agent, repeat=repeat)
    return next((r for r in found if r.key.prompt_id == prompt_id), None)


@st.cache_data(show_spinner=False, max_entries=64)
def search_runs(
    url: str,
    evaluation_id: str,
    filters: tuple[tuple[str, Any], ...],
    limit: int | None,
    offset: int,
) -> dict[str, Any]:
    """One page of an evaluation's runs matching the search filters (see DashboardQueries);
    every matching run for `limit` None. An `across` filter (evaluation ids) searches all
    of them."""
    given = dict(filters)
    across = given.pop("across", None)
    return _queries(url).search_runs(
        evaluation_id,
        **given,
        limit=limit,
        offset=offset,
        across=list(across) if across else None,
    )


@st.cache_resource(show_spinner=False)
def evaluation(url: str, evaluation_id: str) -> StoredEvaluation | None:
    """One evaluation with its stored summary and gate report.

    Shared by every session, not copied (see the module's docstring): read it, never change it."""
    return _store(url).get_evaluation(evaluation_id)


@st.cache_resource(show_spinner=False)
def comparison(
    url: str, baseline: Side, candidate: Side, environment: str | None
) -> ComparisonResult:
    """Candidate against baseline, stored or recomputed by the harness's analysis.

    Shared by every session, not copied (see the module's docstring): read it, never change it."""
    return compare_sides(_store(url), baseline, candidate, environment)


@st.cache_data(show_spinner=False)
def case_fingerprints(
    url: str, representatives: tuple[tuple[str, str], ...], case_id: str
) -> dict[str, str]:
    """Per suite fingerprint, one case's fingerprint (`representatives`: pairs of suite
    fingerprint and an evaluation of it)."""
    found = _queries(url).case_fingerprints(dict(representatives), {case_id})
    return {suite: cases[case_id] for suite, cases in found.items() if case_id in cases}


@st.cache_data(show_spinner=False, max_entries=128)
def tag_members(
    url: str, representatives: tuple[tuple[str, str], ...], tag: str
) -> dict[str, list[str]]:
    """Per suite fingerprint, the cases of one tag (`representatives`: pairs of suite
    fingerprint and an evaluation of it); a fingerprint with no stored outline is absent."""
    found = _queries(url).tag_members(dict(representatives), {tag})
    return {suite: members.get(tag, []) for suite, members in found.items()}


@st.cache_data(show_spinner=False, max_entries=128)
def case_outputs(
    url: str, evaluation_id: str, agent: str, case_ids: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Every run of one agent on the given cases, with its output as text."""
    return _queries(url).case_outputs(evaluation_id, agent, list(case_ids))


@st.cache_data(show_spinner=False)
def case_assertion_types(url: str, evaluation_id: str) -> list[dict[str, Any]]:
    """Per case and assertion type of an evaluation: checks and failures."""
    return _queries(url).case_assertion_types(evaluation_id)


@st.cache_data(show_spinner=False)
def run_metrics(url: str, evaluation_id: str) -> list[dict[str, Any]]:
    """One light row per run of an evaluation: outcome, cost, tokens, latency, steps."""
    return _store(url).aggregates.run_metrics(evaluation_id)
