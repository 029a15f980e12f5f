"""The triage log (append-only, removals recorded) and the viewer's connection, which the
database itself keeps from writing, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from records import make_meta
from sqlalchemy import insert, text
from sqlalchemy.exc import DBAPIError

from evals.model.errors import HarnessFault
from evals.model.triage import TriageAction
from evals.store import Store, open_store, open_viewer_store
from evals.store.schema import triage_actions

NOW = 1_800_000_000.0


def _quarantine(case_id: str, until: float, suite_id: str = "suite-a") -> TriageAction:
    return TriageAction("quarantine", suite_id, "alice", "flaky", NOW, case_id=case_id, until=until)


def test_removals_and_expiries_leave_the_log_but_not_what_is_in_force(store: Store) -> None:
    kept = store.triage.record(_quarantine("c1", NOW + 100))
    gone = store.triage.record(_quarantine("c2", NOW + 100))
    store.triage.record(_quarantine("c3", NOW - 1))
    store.triage.record(_quarantine("c4", NOW + 100, suite_id="suite-b"))
    removal = store.triage.record(
        TriageAction("remove", "suite-a", "bob", "fixed upstream", NOW + 1, target_id=gone.id)
    )

    assert [a.case_id for a in store.triage.current("suite-a", now=NOW)] == ["c1"]
    assert store.triage.current("suite-a", now=NOW)[0] == kept
    everything = store.triage.history("suite-a")
    assert [a.kind for a in everything] == ["remove", "quarantine", "quarantine", "quarantine"]
    assert everything[0] == removal and removal.target_id == gone.id
    assert [a.case_id for a in store.triage.history(actor="alice")] == ["c4", "c3", "c2", "c1"]
    with pytest.raises(ValueError, match="already removed"):
        store.triage.record(
            TriageAction("remove", "suite-a", "bob", "again", NOW + 2, target_id=gone.id)
        )
    with pytest.raises(ValueError, match="belongs to suite suite-b"):
        store.triage.record(TriageAction("remove", "suite-a", "bob", "x", NOW, target_id=4))


def test_the_database_refuses_a_quarantine_without_an_expiry(store: Store) -> None:
    row = {"kind": "quarantine", "suite_id": "s", "case_id": "c", "reason": "r"}
    with pytest.raises(DBAPIError), store.engine.begin() as connection:
        connection.execute(insert(triage_actions).values(**row, actor="a", created_at=NOW))


def test_the_viewer_connection_cannot_write(store_url: str) -> None:
    writer = open_store(store_url)
    writer.create_evaluation(make_meta("ev-1", status="complete"))
    writer.triage.record(_quarantine("c1", NOW + 100))
    writer.close()

    viewer = open_viewer_store(store_url)
    try:
        assert viewer.get_evaluation("ev-1") is not None
        assert len(viewer.triage.current(None, now=NOW)) == 1
        with pytest.raises(DBAPIError, match=r"(?i)read.?only"):
            viewer.triage.record(_quarantine("c2", NOW + 100))
        with pytest.raises(DBAPIError, match=r"(?i)read.?only"), viewer.engine.begin() as c:
            c.execute(text("DELETE FROM evaluations"))
    finally:
        viewer.close()
    reader = open_store(store_url)
    assert reader.get_evaluation("ev-1") is not None
    assert len(reader.triage.history()) == 1
    reader.close()


def test_a_viewer_never_creates_nor_upgrades_a_store(sqlite_url: str) -> None:
    with pytest.raises(HarnessFault, match="no results store"):
        open_viewer_store(sqlite_url)
    writer = open_store(sqlite_url)
    with writer.engine.begin() as connection:
        connection.execute(text("DELETE FROM schema_version"))
        connection.execute(text("INSERT INTO schema_version VALUES (4, 'older', 0)"))
    writer.close()
    with pytest.raises(HarnessFault, match="read-only connection cannot upgrade"):
        open_viewer_store(sqlite_url)
