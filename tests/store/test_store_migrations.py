"""Schema creation and upgrades: an old store is brought to the current schema, data intact."""

from __future__ import annotations

import pytest
import schema_v1
from records import make_meta, make_records
from sqlalchemy import insert, inspect

from evals.model.errors import HarnessFault, SuiteError
from evals.store import open_store
from evals.store.codec import RunRow, encode_run
from evals.store.engine import create_store_engine
from evals.store.layout import SCHEMA_VERSION
from evals.store.location import resolve_url
from evals.store.migrations import ensure_schema, stored_version
from evals.store.schema import metadata, schema_version


def _reflected_shape(url: str) -> dict[str, tuple[list[str], list[str]]]:
    engine = create_store_engine(resolve_url(url))
    inspector = inspect(engine)
    shape = {
        table: (
            sorted(c["name"] for c in inspector.get_columns(table)),
            sorted(
                i["name"] for i in inspector.get_indexes(table) if "duplicates_constraint" not in i
            ),
        )
        for table in inspector.get_table_names()
    }
    engine.dispose()
    return shape


def _declared_shape() -> dict[str, tuple[list[str], list[str]]]:
    return {
        name: (sorted(c.name for c in table.columns), sorted(i.name for i in table.indexes))
        for name, table in metadata.tables.items()
    }


def _write_version_1_store(url: str) -> None:
    engine = create_store_engine(resolve_url(url))
    schema_v1.metadata.create_all(engine)
    meta = make_meta("ev-1", status="complete")
    with engine.begin() as connection:
        connection.execute(
            insert(schema_v1.schema_version).values(version=1, description="v1", applied_at=0.0)
        )
        connection.execute(
            insert(schema_v1.evaluations).values(
                id=meta.id,
                suite_id=meta.suite_id,
                fingerprint=meta.fingerprint,
                description=meta.description,
                started_at=meta.started_at,
                status="complete",
                agents=meta.agents,
                gates={"gates": [], "verdict": "fail", "passed": False},
            )
        )
        connection.execute(
            insert(schema_v1.runs),
            [RunRow._make(encode_run("ev-1", r)[0])._asdict() for r in make_records(3, 2)],
        )
    engine.dispose()


def test_a_new_store_has_the_declared_schema(store_url: str) -> None:
    open_store(store_url).close()

    assert _reflected_shape(store_url) == _declared_shape()


def test_a_version_1_store_is_upgraded_with_its_data(store_url: str) -> None:
    _write_version_1_store(store_url)

    store = open_store(store_url)

    with store.engine.connect() as connection:
        assert stored_version(connection) == SCHEMA_VERSION
        applied = connection.execute(
            schema_version.select().order_by(schema_version.c.version)
        ).all()
    assert [row.version for row in applied] == list(range(1, SCHEMA_VERSION + 1))
    evaluation = store.get_evaluation("ev-1")
    assert evaluation is not None and evaluation.verdict == "fail"
    assert evaluation.agent_fingerprints == {}
    assert (evaluation.planned_runs, evaluation.stored_runs, evaluation.ci_event) == (None,) * 3
    assert len(store.load_runs("ev-1")) == 12
    assert store.aggregates.agent_totals(["ev-1"])[0]["runs"] == 6
    store.close()
    assert _reflected_shape(store_url) == _declared_shape()


def test_opening_a_current_store_changes_nothing(store_url: str) -> None:
    open_store(store_url).close()
    engine = create_store_engine(resolve_url(store_url))

    assert ensure_schema(engine) == SCHEMA_VERSION
    with engine.connect() as connection:
        assert len(connection.execute(schema_version.select()).all()) == 1
    engine.dispose()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_store_from_a_newer_harness_is_refused_as_an_input_error(
    store_url: str, read_only: bool
) -> None:
    open_store(store_url).close()
    engine = create_store_engine(resolve_url(store_url))
    with engine.begin() as connection:
        connection.execute(
            insert(schema_version).values(
                version=SCHEMA_VERSION + 1, description="x", applied_at=0.0
            )
        )

    newer = f"written by a newer evals \\(schema {SCHEMA_VERSION + 1}"
    with pytest.raises(SuiteError, match=newer) as refused:
        open_store(store_url, read_only=read_only)
    assert refused.value.fix is not None and "upgrade evals" in refused.value.fix
    with engine.connect() as connection:
        assert stored_version(connection) == SCHEMA_VERSION + 1
    engine.dispose()


def test_a_read_only_connection_never_upgrades_a_postgresql_store(postgres_url: str) -> None:
    _write_version_1_store(postgres_url)

    with pytest.raises(HarnessFault, match="read-only connection cannot upgrade"):
        open_store(postgres_url, read_only=True)

    engine = create_store_engine(resolve_url(postgres_url))
    with engine.connect() as connection:
        assert stored_version(connection) == 1
    engine.dispose()


def test_a_read_only_postgresql_session_cannot_write(postgres_url: str) -> None:
    open_store(postgres_url).close()
    reader = open_store(postgres_url, read_only=True)
    try:
        assert reader.list_evaluations() == []
        with pytest.raises(Exception, match="read-only transaction"):
            reader.create_evaluation(make_meta("fake-nightly", status="complete"))
    finally:
        reader.close()
    writer = open_store(postgres_url)
    try:
        assert writer.get_evaluation("fake-nightly") is None
    finally:
        writer.close()


def test_a_read_only_sqlite_copy_is_upgraded_in_place(sqlite_url: str) -> None:
    _write_version_1_store(sqlite_url)

    store = open_store(sqlite_url, read_only=True)

    assert [e.id for e in store.list_evaluations()] == ["ev-1"]
    store.close()


def test_a_version_6_triage_log_is_kept_and_takes_annotations(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy import text

    from evals.model.triage import TriageAction
    from evals.store import migrations

    _write_version_1_store(store_url)
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:-1])
    monkeypatch.setattr(migrations, "SCHEMA_VERSION", 6)
    engine = create_store_engine(resolve_url(store_url))
    ensure_schema(engine)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO triage_actions (kind, suite_id, case_id, until, reason, actor, "
                "created_at) VALUES ('quarantine', 's', 'c', 9e9, 'flaky', 'ann', 1.0)"
            )
        )
    engine.dispose()
    monkeypatch.undo()

    store = open_store(store_url)
    (kept,) = store.triage.history("s")
    assert (kept.kind, kept.case_id, kept.reason) == ("quarantine", "c", "flaky")
    note = TriageAction(
        "override",
        "s",
        "tom",
        "the judge missed the sourced price",
        2.0,
        case_id="c",
        evaluation_id="ev-1",
        agent="a",
        prompt_id="p",
        repeat=1,
        label="pass",
    )
    stored = store.triage.record(note)
    assert stored.id == kept.id + 1 and store.triage.get(stored.id) == stored
    assert store.triage.get(kept.id) == kept
    store.close()
    assert _reflected_shape(store_url) == _declared_shape()
