"""Cached reads of the store for the pages.

Documents of a complete evaluation never change, so everything keyed by evaluation ids is
cached until the server restarts; listings (which grow as runs land) expire after a
minute. The store URL is part of every key, so one server never mixes two stores.
"""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from evals.dashboard.comparison import ComparisonResult, Side, compare_sides
from evals.model.results import RunRecord
from evals.store import Store, StoredEvaluation, open_viewer_store
from evals.store.dashboard_queries import DashboardQueries
from evals.store.engine import resolve_url

LISTING_TTL_S = 60


def store_url() -> str:
    """The store the dashboard reads: $EVALS_STORE_URL, else `.evals/results.db`."""
    return resolve_url(os.environ.get("EVALS_STORE_URL"))


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
def trend(url: str, suite_id: str, environment: str | None) -> list[dict[str, Any]]:
    """Per-agent statistics of the suite's recent complete evaluations, oldest first."""
    return _queries(url).trend(suite_id, environment)


@st.cache_data(show_spinner=False)
def evaluation(url: str, evaluation_id: str) -> StoredEvaluation | None:
    """One evaluation with its stored summary and gate report."""
    return _store(url).get_evaluation(evaluation_id)


@st.cache_data(show_spinner=False)
def comparison(
    url: str, baseline: Side, candidate: Side, environment: str | None
) -> ComparisonResult:
    """Candidate against baseline, stored or recomputed by the harness's analysis."""
    return compare_sides(_store(url), baseline, candidate, environment)


@st.cache_data(show_spinner=False)
def case_assertion_types(url: str, evaluation_id: str) -> list[dict[str, Any]]:
    """Per case and assertion type of an evaluation: checks and failures."""
    return _queries(url).case_assertion_types(evaluation_id)


@st.cache_data(show_spinner=False)
def run_metrics(url: str, evaluation_id: str) -> list[dict[str, Any]]:
    """One light row per run of an evaluation: outcome, cost, tokens, latency, steps."""
    return _store(url).aggregates.run_metrics(evaluation_id)


@st.cache_data(show_spinner=False)
def case_runs(url: str, evaluation_id: str, case_id: str, agent: str) -> list[RunRecord]:
    """Every stored run of one agent on one case, with outputs, grades and trajectories."""
    return _store(url).load_runs(evaluation_id, case_id=case_id, agent=agent)
