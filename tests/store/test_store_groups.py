"""Per-group rows of finished evaluations: copied from the stored summary when an
evaluation finishes, and filled in by the migration for evaluations stored before."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, select, text, update

from benchmarks.synthetic_history import CASES, DAY, START, Evaluation, commit, write
from evals.store import open_store
from evals.store.dashboard_queries import DashboardQueries
from evals.store.schema import group_rates, group_verdicts, schema_version
from evals.suite import load_suite


def _rows(url: str) -> tuple[list[tuple], list[tuple]]:
    store = open_store(url)
    with store.engine.connect() as connection:
        rates = connection.execute(select(group_rates).order_by(*group_rates.primary_key)).all()
        verdicts = connection.execute(
            select(group_verdicts).order_by(*group_verdicts.primary_key)
        ).all()
    store.close()
    return [tuple(r) for r in rates], [tuple(r) for r in verdicts]


def _two_nightlies(url: str) -> None:
    suite = load_suite(str(CASES / "trading-research"))
    store = open_store(url)
    for night, regressed in ((1, frozenset()), (2, frozenset({"noticias"}))):
        evaluation = Evaluation(
            f"n{night}", "nightly", "main", commit(night), START + night * DAY, 4, regressed
        )
        write(store, suite, evaluation)
    store.close()


@pytest.mark.slow
def test_finishing_an_evaluation_copies_its_rates_and_verdicts(store_url: str) -> None:
    _two_nightlies(store_url)
    store = open_store(store_url)
    summary = store.get_evaluation("n2").summary
    queries = DashboardQueries(store.engine)
    rates = {(r["case_id"], r["agent"]): r["pass_rate"] for r in queries.case_rates("n2")}
    assert rates == {(c["case_id"], c["agent"]): c["pass_rate"] for c in summary["case_stats"]}
    trend = queries.group_trend("trading-research", "nightly", "tag", "noticias")
    stored_tag = next(t for t in summary["comparison"]["tags"] if t["group"] == "noticias")
    newest = [row for row in trend if row["evaluation"] == "n2"]
    assert {row["verdict"] for row in newest} == {stored_tag["verdict"]} == {"regression"}
    assert newest[0]["q_value"] == stored_tag["p_adjusted"]
    store.close()


@pytest.mark.slow
def test_the_migration_fills_the_rows_of_evaluations_stored_before(store_url: str) -> None:
    _two_nightlies(store_url)
    written = _rows(store_url)
    store = open_store(store_url)
    with store.engine.begin() as connection:
        connection.execute(delete(group_rates))
        connection.execute(delete(group_verdicts))
        connection.execute(text("DROP TABLE group_verdicts"))
        connection.execute(text("DROP TABLE group_rates"))
        connection.execute(text("DROP TABLE triage_actions"))  # a version 4 store had none
        connection.execute(update(schema_version).values(version=4))
    store.close()
    assert _rows(store_url) == written
    assert written[0] and written[1]
