"""Runs search by metadata (the run's metadata or its case's, on SQLite and PostgreSQL), and
regular-expression searches within their time limit."""

from __future__ import annotations

import threading
import time

import pytest

from benchmarks.dashboard_scale import fill
from evals.store import Store, dashboard_queries, open_store
from evals.store.dashboard_queries import DashboardQueries, SearchError

FILTERS = [
    [("model", "sim-2")],
    [("priority", "P0")],
    [("tags", "tag-3")],
    [("priority", "P0"), ("model", "sim-1")],
    [("model", "sim-9")],
    [("shared", "nothing")],
]


def _expected(store: Store, evaluation_id: str, filters: list[tuple[str, str]]) -> set[tuple]:
    """The runs matching every filter, found by reading whole records in Python."""
    stored = store.get_evaluation(evaluation_id)
    assert stored is not None
    cases = {case.id: case.metadata for case in stored.suite_outline().cases}

    def holds(record, key: str, value: str) -> bool:  # type: ignore[no-untyped-def]
        run_side = {**record.metadata, **record.response.metadata}
        held = cases[record.key.case_id].get(key)
        return run_side.get(key) == value or held == value or value in (held or [])

    return {
        (r.key.case_id, r.key.agent, r.key.repeat)
        for r in store.load_runs(evaluation_id)
        if all(holds(r, key, value) for key, value in filters)
    }


@pytest.mark.slow
@pytest.mark.parametrize("filters", FILTERS)
def test_metadata_filters_match_what_the_records_hold(
    store: Store, filters: list[tuple[str, str]]
) -> None:
    fill(store, evaluations=1, cases=30, repeats=2)
    found = DashboardQueries(store.engine).search_runs("scale-0000", metadata=filters, limit=500)
    got = {(r["case_id"], r["agent"], r["repeat"]) for r in found["rows"]}
    expected = _expected(store, "scale-0000", filters)
    assert got == expected and found["total"] == len(expected)
    if filters == [("priority", "P0")]:
        assert {case for case, _, _ in got} == {"case-0000", "case-0025"}


def test_a_key_with_a_double_quote_is_refused(store: Store) -> None:
    fill(store, evaluations=1, cases=2, repeats=1)
    with pytest.raises(ValueError, match="double quote"):
        DashboardQueries(store.engine).search_runs("scale-0000", metadata=[('a"b', "c")])


def _search_in_thread(queries: DashboardQueries, pattern: str) -> dict[str, object]:
    """The outcome of a regex search, or "still running" after a minute (a daemon thread
    left behind: a search without a limit never ends)."""
    outcome: dict[str, object] = {"state": "still running"}

    def search() -> None:
        try:
            outcome["found"] = queries.search_runs("scale-0000", text=pattern, regex=True)
            outcome["state"] = "found"
        except SearchError as exc:
            outcome["error"], outcome["state"] = str(exc), "refused"

    thread = threading.Thread(target=search, daemon=True)
    thread.start()
    thread.join(60)
    return outcome


@pytest.mark.slow
def test_a_catastrophic_regex_search_stops_at_its_limit(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dashboard_queries, "SEARCH_TIME_LIMIT_S", 1.0)
    store = open_store(sqlite_url)
    try:
        fill(store, evaluations=1, cases=4, repeats=1)
        with store.engine.begin() as connection:
            connection.exec_driver_sql("UPDATE runs SET error = ?", ("a" * 80 + "!",))
        queries = DashboardQueries(store.engine)
        started = time.monotonic()
        outcome = _search_in_thread(queries, "^(a|aa)+$")
        assert outcome["state"] == "refused", outcome
        assert "longer than 1 s" in str(outcome["error"])
        assert time.monotonic() - started < 30
        # the limit is per search: a quick one afterwards answers
        every = queries.search_runs("scale-0000")["total"]
        assert queries.search_runs("scale-0000", text="^a+!$", regex=True)["total"] == every
    finally:
        store.close()


def test_an_invalid_search_pattern_is_a_search_error(store: Store) -> None:
    fill(store, evaluations=1, cases=2, repeats=1)
    with pytest.raises(SearchError):
        DashboardQueries(store.engine).search_runs("scale-0000", text="(unclosed", regex=True)
