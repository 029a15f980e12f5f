"""Runs search by metadata: the run's metadata or its case's, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from benchmarks.dashboard_scale import fill
from evals.store import Store
from evals.store.dashboard_queries import DashboardQueries

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
