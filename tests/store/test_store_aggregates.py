"""Database-side aggregates, checked against the same numbers computed from the records."""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean

import pytest
from records import make_meta, make_records

from evals.model.summary import GateReport, Summary
from evals.store import Store


@pytest.fixture
def filled(store: Store) -> Store:
    """Two complete evaluations of 'trading' (different plans) and one of another suite."""
    for ident, cases, started, suite in (
        ("ev-1", 5, 100.0, "trading"),
        ("ev-2", 7, 200.0, "trading"),
        ("ev-3", 3, 300.0, "other"),
    ):
        meta = make_meta(ident, started_at=started, suite_id=suite, status="complete")
        store.create_evaluation(meta)
        store.add_runs(ident, make_records(cases, repeats=3))
        summary = Summary(suite, None, "fp1", 0.95, [], [], [], None)
        store.finish_evaluation(meta, summary, GateReport([]))
    return store


def _expected(records, key):
    groups = defaultdict(list)
    for record in records:
        groups[key(record)].append(record)
    return groups


def test_agent_totals_match_the_records(filled: Store) -> None:
    rows = filled.aggregates.agent_totals(["ev-1", "ev-2"])

    expected = {}
    for ident, cases in (("ev-1", 5), ("ev-2", 7)):
        for agent, group in _expected(make_records(cases, 3), lambda r: r.key.agent).items():
            expected[(ident, agent)] = group
    assert [(r["evaluation_id"], r["agent"]) for r in rows] == sorted(expected)
    for row in rows:
        group = expected[(row["evaluation_id"], row["agent"])]
        assert row["runs"] == len(group)
        assert row["passes"] == sum(r.status == "pass" for r in group)
        assert row["fails"] == sum(r.status == "fail" for r in group)
        assert row["errors"] == sum(r.status == "error" for r in group)
        assert row["total_cost"] == pytest.approx(sum(r.cost or 0.0 for r in group))
        assert row["mean_cost"] == pytest.approx(
            fmean(r.response.cost for r in group if r.response.cost is not None)
        )
        assert row["total_tokens"] == sum(r.total_tokens for r in group)
        assert row["mean_latency_ms"] == pytest.approx(fmean(r.latency_ms for r in group))
        assert row["max_latency_ms"] == max(r.latency_ms for r in group)


def test_case_agent_counts_match_the_records(filled: Store) -> None:
    rows = filled.aggregates.case_agent_counts(["ev-2"])

    expected = _expected(make_records(7, 3), lambda r: (r.key.case_id, r.key.agent))
    assert [(r["case_id"], r["agent"]) for r in rows] == sorted(expected)
    for row in rows:
        group = expected[(row["case_id"], row["agent"])]
        assert row["case_index"] == group[0].case_index
        assert (row["runs"], row["passes"], row["fails"], row["errors"]) == (
            len(group),
            sum(r.status == "pass" for r in group),
            sum(r.status == "fail" for r in group),
            sum(r.status == "error" for r in group),
        )
        scores = [r.grade.score for r in group if r.grade is not None]
        assert row["mean_score"] == (pytest.approx(fmean(scores)) if scores else None)
        assert row["mean_steps"] == pytest.approx(fmean(len(r.response.trajectory) for r in group))


def test_trend_lists_complete_evaluations_of_the_suite_oldest_first(filled: Store) -> None:
    rows = filled.aggregates.trend("trading")

    assert [(r["evaluation_id"], r["agent"]) for r in rows] == [
        ("ev-1", "baseline"),
        ("ev-1", "candidate"),
        ("ev-2", "baseline"),
        ("ev-2", "candidate"),
    ]
    assert [r["runs"] for r in rows] == [15, 15, 21, 21]
    assert [r["evaluation_id"] for r in filled.aggregates.trend("trading", limit=1)] == ["ev-2"] * 2
    assert filled.aggregates.trend("trading", branch="feature") == []


def test_run_metrics_has_one_row_per_run(filled: Store) -> None:
    rows = filled.aggregates.run_metrics("ev-3")

    records = make_records(3, 3)
    assert [(r["case_id"], r["agent"], r["repeat"], r["status"]) for r in rows] == [
        (r.key.case_id, r.key.agent, r.key.repeat, r.status) for r in records
    ]


def test_assertion_failures_count_every_graded_assertion(filled: Store) -> None:
    rows = filled.aggregates.assertion_failures("ev-1")

    expected = defaultdict(lambda: [0, 0])

    def visit(agent, grade, root):
        if not root:
            key = (
                agent,
                (grade.assertion or {}).get("type"),
                (grade.assertion or {}).get("metric"),
            )
            expected[key][0] += 1
            expected[key][1] += not grade.passed
        for child in grade.component_results:
            visit(agent, child, False)

    for record in make_records(5, 3):
        if record.grade is not None:
            visit(record.key.agent, record.grade, True)
    got = {(r["agent"], r["type"], r["metric"]): [r["checked"], r["failed"]] for r in rows}
    assert got == dict(expected)
    assert any(failed for _, failed in got.values())
