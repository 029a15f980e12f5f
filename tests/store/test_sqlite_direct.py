"""The store process's SQLite writes without SQLAlchemy: the same store, row for row, as
SQLAlchemy's path writes, and SQLAlchemy's path wherever it must be taken."""

from __future__ import annotations

import io
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, insert
from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

from benchmarks.synthetic_history import CASES, DAY, START, Evaluation, commit, write
from evals.model.errors import SuiteError
from evals.model.results import RunRecord
from evals.model.summary import GateReport, Summary
from evals.model.triage import TriageAction
from evals.store import Store, open_store
from evals.store.codec import RUN_COLUMNS, RunRow, encode_run
from evals.store.jsontype import JsonDocument
from evals.store.layout import (
    EVALUATION_JSON_COLUMNS,
    META_COLUMNS,
    RUN_JSON_COLUMNS,
    SCHEMA_VERSION,
)
from evals.store.process import open_run_store, serve
from evals.store.schema import evaluations, metadata, runs
from evals.store.sqlite_direct import (
    SCHEMA_FILE,
    SqliteDirect,
    configure_connection,
    open_direct,
    schema_statements,
)
from evals.suite import load_suite
from tests.store import schema_v1
from tests.store.records import make_meta, make_records
from tests.store.test_store_properties import records as any_record

ROOT = Path(__file__).resolve().parents[2]


def _normalized(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).replace("( ", "(").replace(" )", ")").strip()


def _sqlalchemy_ddl() -> list[str]:
    dialect = sqlite.dialect()
    statements = []
    for table in metadata.sorted_tables:
        statements.append(str(CreateTable(table).compile(dialect=dialect)))
        for index in sorted(table.indexes, key=lambda i: i.name or ""):
            statements.append(str(CreateIndex(index).compile(dialect=dialect)))
    return [_normalized(s) for s in statements]


def test_the_schema_file_is_the_ddl_sqlalchemy_compiles_from_the_schema() -> None:
    assert [_normalized(s) for s in schema_statements()] == _sqlalchemy_ddl(), (
        f"{SCHEMA_FILE.name} differs from evals.store.schema: write each table's "
        "CreateTable and each index's CreateIndex, compiled for SQLite, into it"
    )


def test_the_column_lists_without_sqlalchemy_are_the_schemas() -> None:
    assert tuple(c.name for c in runs.columns if c.name != "id") == RUN_COLUMNS
    assert {c.name for c in runs.columns if isinstance(c.type, JsonDocument)} == RUN_JSON_COLUMNS
    json_columns = {c.name for c in evaluations.columns if isinstance(c.type, JsonDocument)}
    assert json_columns == EVALUATION_JSON_COLUMNS
    assert set(META_COLUMNS) | json_columns | {"verdict"} == set(evaluations.columns.keys())


def _dump(path: Path) -> dict[str, list[tuple]]:
    """Every table's rows with the storage class of each value (schema_version without
    the time it was applied), and the schema itself."""
    with sqlite3.connect(path) as connection:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        dump = {
            "schema": [
                (kind, name, _normalized(sql or ""))
                for kind, name, sql in connection.execute(
                    "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
                )
            ]
        }
        for table in tables:
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            if table == "schema_version":
                columns.remove("applied_at")
            typed = ", ".join(f'"{c}", typeof("{c}")' for c in columns)
            dump[table] = connection.execute(
                f"SELECT {typed} FROM {table} ORDER BY 1, 2"
            ).fetchall()
    return dump


class _Direct:
    """A SqliteDirect with `Store.add_runs`, for the history writer of the benchmarks."""

    def __init__(self, direct: SqliteDirect) -> None:
        self.direct = direct

    def create_evaluation(self, meta) -> None:
        self.direct.create_evaluation(meta)

    def add_runs(self, evaluation_id: str, records: list[RunRecord]) -> int:
        return self.direct.add_encoded([encode_run(evaluation_id, r) for r in records])

    def finish_evaluation(self, meta, summary, gates) -> None:
        self.direct.finish_evaluation(meta, summary, gates)


def _direct(path: Path) -> SqliteDirect:
    opened = open_direct(f"sqlite:///{path}")
    assert isinstance(opened, SqliteDirect)
    return opened


@pytest.mark.slow
def test_a_history_written_directly_is_the_store_sqlalchemy_writes(tmp_path: Path) -> None:
    suite = load_suite(str(CASES / "trading-research"))
    nights = [
        Evaluation(f"n{n}", "nightly", "main", commit(n), START + n * DAY, 3, regressed)
        for n, regressed in ((1, frozenset()), (2, frozenset({"noticias"})))
    ]
    through_sqlalchemy = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    direct = _direct(tmp_path / "b.db")
    for night in nights:
        write(through_sqlalchemy, suite, night, batch=100)
        write(_Direct(direct), suite, night, batch=100)  # type: ignore[arg-type]
    through_sqlalchemy.close()
    direct.close()

    written = _dump(tmp_path / "a.db")
    assert written == _dump(tmp_path / "b.db")
    assert len(written["runs"]) > 100 and len(written["group_verdicts"]) > 10
    assert len(written["gate_results"]) > 0


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(batch=st.lists(any_record, min_size=1, max_size=4))
def test_any_runs_are_stored_as_sqlalchemy_stores_them(
    tmp_path_factory: pytest.TempPathFactory, batch: list[RunRecord]
) -> None:
    folder = tmp_path_factory.mktemp("any")
    through_sqlalchemy = open_store(f"sqlite:///{folder / 'a.db'}")
    direct = _direct(folder / "b.db")
    meta = make_meta("ev-any")
    through_sqlalchemy.create_evaluation(meta)
    direct.create_evaluation(meta)
    encoded = [encode_run(meta.id, record) for record in batch]
    assert direct.add_encoded(encoded) == through_sqlalchemy.add_encoded(encoded)
    assert direct.add_encoded(encoded) == 0  # a run sent again is not stored again
    meta.status, meta.ended_at, meta.stored_runs = "interrupted", 7.5, len(batch)
    direct.mark_interrupted(meta)
    through_sqlalchemy.mark_interrupted(meta)
    through_sqlalchemy.close()
    direct.close()

    assert _dump(folder / "a.db") == _dump(folder / "b.db")
    reader = open_store(f"sqlite:///{folder / 'b.db'}")
    unique = {record.key.as_tuple(): record for record in batch}
    assert {r.key.as_tuple(): r for r in reader.load_runs(meta.id)} == unique
    reader.close()


def test_quarantines_are_read_as_the_triage_log_reads_them(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'results.db'}"
    store = open_store(url)

    def quarantine(case_id: str, until: float, suite_id: str = "s", created: float = 1.0) -> int:
        action = TriageAction(
            "quarantine", suite_id, "ana", "flaky", created, case_id=case_id, until=until
        )
        new_id = store.triage.record(action).id
        assert new_id is not None
        return new_id

    quarantine("a", until=100.0, created=3.0)
    quarantine("b", until=50.0, created=2.0)
    removed = quarantine("c", until=100.0)
    quarantine("d", until=100.0, suite_id="other")
    quarantine("e", until=100.0, created=3.0)
    store.triage.record(TriageAction("remove", "s", "ana", "fixed", 4.0, target_id=removed))
    store.triage.record(TriageAction("acknowledge", "s", "ana", "known", 5.0, case_id="a"))
    direct = _direct(tmp_path / "results.db")

    for now in (0.0, 49.0, 50.0, 99.9, 100.0):
        expected = store.quarantines("s", now)
        assert direct.quarantines("s", now) == expected
    assert [a.case_id for a in direct.quarantines("s", 10.0)] == ["e", "a", "b"]
    assert direct.quarantines("s", 100.0) == []
    store.close()
    direct.close()


def test_an_evaluation_id_given_twice_is_the_same_suite_error(tmp_path: Path) -> None:
    direct = _direct(tmp_path / "results.db")
    direct.create_evaluation(make_meta("ev-1"))
    with pytest.raises(SuiteError) as raised:
        direct.create_evaluation(make_meta("ev-1"))
    direct.close()
    store = open_store(f"sqlite:///{tmp_path / 'results.db'}")
    with pytest.raises(SuiteError) as through_sqlalchemy:
        store.create_evaluation(make_meta("ev-1"))
    store.close()
    assert str(raised.value) == str(through_sqlalchemy.value)
    assert "--evaluation-id ev-1" in str(raised.value)


def test_a_failed_transaction_leaves_nothing_behind(tmp_path: Path) -> None:
    direct = _direct(tmp_path / "results.db")
    meta = make_meta("ev-1")
    direct.create_evaluation(meta)
    records = make_records(cases=2, repeats=2)
    good = [encode_run(meta.id, r) for r in records]
    bad_row = tuple(RunRow._make(good[-1][0])._replace(status="maybe", repeat=99))  # no status
    with pytest.raises(sqlite3.IntegrityError):
        direct.add_encoded([*good, (bad_row, good[-1][1])])
    assert direct.add_encoded(good) == len(good)  # the failed batch stored none of them
    direct.close()


def _version_one_store(path: Path) -> None:
    engine = create_engine(f"sqlite:///{path}")
    schema_v1.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(
            insert(schema_v1.schema_version).values(version=1, description="v1", applied_at=0.0)
        )
    engine.dispose()


def test_stores_the_direct_path_cannot_take_go_through_sqlalchemy(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    _version_one_store(old)
    assert open_direct(f"sqlite:///{old}") is None
    migrated = open_run_store(f"sqlite:///{old}")
    assert isinstance(migrated, Store)  # and SQLAlchemy's path upgrades it
    migrated.close()
    assert isinstance(open_direct(f"sqlite:///{old}"), SqliteDirect)  # current now

    newer = tmp_path / "newer.db"
    _direct(newer).close()
    with sqlite3.connect(newer) as connection:
        connection.execute("INSERT INTO schema_version VALUES (99, 'future', 0)")
    assert open_direct(f"sqlite:///{newer}") is None
    with pytest.raises(SuiteError, match="written by a newer evals"):
        open_run_store(f"sqlite:///{newer}")

    with_options = f"sqlite:///{tmp_path / 'x.db'}?timeout=5"
    assert open_direct(with_options) is None
    assert not (tmp_path / "x.db").exists()


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
def test_schema_creation_races_leave_one_schema(tmp_path: Path, round_: int) -> None:
    """Eight processes open one new store at once: each gets it, with one schema."""
    path = tmp_path / f"results-{round_}.db"
    script = textwrap.dedent(
        f"""
        from evals.store.sqlite_direct import open_direct
        opened = open_direct("sqlite:///{path}")
        print(type(opened).__name__)
        """
    )
    children = [
        subprocess.Popen(
            [sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        for _ in range(8)
    ]
    names = [child.communicate(timeout=60)[0].strip() for child in children]
    assert names == ["SqliteDirect"] * 8
    with sqlite3.connect(path) as connection:
        versions = connection.execute("SELECT version FROM schema_version").fetchall()
    assert versions == [(SCHEMA_VERSION,)]


def test_a_new_store_locked_for_a_moment_is_waited_for(tmp_path: Path) -> None:
    """While another connection is writing the new file (the schema of a racing process),
    SQLite refuses the switch to WAL at once, busy timeout or not; the connection's set-up
    tries again until the writer is done."""
    path = tmp_path / "results.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE held (x)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO held VALUES (1)")
    waiting = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    waiting.execute("PRAGMA busy_timeout = 2000")
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        waiting.execute("PRAGMA journal_mode = WAL")  # what SQLite does without the retry
    assert time.monotonic() - started < 1.0  # at once, not after the busy timeout
    timer = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    timer.start()
    started = time.monotonic()
    configure_connection(waiting)
    timer.join()
    assert time.monotonic() - started >= 0.2
    assert waiting.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    waiting.close()
    holder.close()


def test_the_store_process_never_imports_sqlalchemy_for_a_sqlite_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'results.db'}"
    script = textwrap.dedent(
        f"""
        import io, os, sys
        from evals.store.companion import frame
        from evals.store.codec import encode_run
        from evals.store.process import serve
        from evals.model.summary import GateReport, Summary
        from tests.store.records import make_meta, make_records

        meta = make_meta("ev-1")
        runs = [encode_run(meta.id, r) for r in make_records(cases=3, repeats=2)]
        summary = Summary("trading", None, "fp1", 0.95, [], [], [], None)
        messages = [
            ("begin", meta, True), ("runs", runs), ("quarantines", "trading", 1.0),
            ("finish", meta, summary, GateReport(gates=[])),
        ]
        read, write = os.pipe()
        os.write(write, b"".join(frame(m) for m in messages))
        os.close(write)
        answers = io.BytesIO()
        code = serve({url!r}, read, answers, 256, 0.25)
        print(code, "sqlalchemy" in sys.modules, len(answers.getvalue()) > 0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.split() == ["0", "False", "True"], done.stderr
    store = open_store(url)
    assert len(store.load_runs("ev-1")) == len(make_records(cases=3, repeats=2))
    assert store.get_evaluation("ev-1").verdict == "pass"
    store.close()


def test_the_store_process_upgrades_an_old_store_through_sqlalchemy(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _version_one_store(path)
    from evals.store.companion import Inbox, frame

    meta = make_meta("ev-1")
    runs = [encode_run(meta.id, r) for r in make_records(cases=2, repeats=2)]
    summary = Summary("trading", None, "fp1", 0.95, [], [], [], None)
    read, write_end = os.pipe()
    messages = [("begin", meta, True), ("runs", runs), ("finish", meta, summary, GateReport([]))]
    os.write(write_end, b"".join(frame(m) for m in messages))
    os.close(write_end)
    answers = io.BytesIO()
    assert serve(f"sqlite:///{path}", read, answers, 256, 0.25) == 0
    replies_read, replies_write = os.pipe()
    os.write(replies_write, answers.getvalue())
    os.close(replies_write)
    inbox = Inbox(replies_read)
    assert [inbox.next(5.0), inbox.next(5.0)] == [("ok", 0), ("ok", len(runs))]
    os.close(replies_read)
    with sqlite3.connect(path) as connection:
        versions = connection.execute("SELECT version FROM schema_version").fetchall()
        stored = connection.execute("SELECT count(*) FROM runs").fetchone()
    assert [v for (v,) in versions] == list(range(1, SCHEMA_VERSION + 1))
    assert stored == (len(runs),)
