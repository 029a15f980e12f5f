"""Runs in the store: exact round-trip, idempotent writes, and resume after a crash."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from records import make_meta, make_record, make_records, wait_until_gone

from evals.store import Store, open_store
from evals.store.schema import grades, runs

WRITE_RUNS = Path(__file__).with_name("write_runs.py")


def _plan_order(records):
    return sorted(
        records, key=lambda r: (r.case_index, r.prompt_index, r.agent_index, r.key.repeat)
    )


def _row_counts(store: Store) -> tuple[int, int]:
    with store.engine.connect() as connection:
        run_count = connection.execute(runs.select().with_only_columns(runs.c.id)).all()
        grade_count = connection.execute(grades.select().with_only_columns(grades.c.idx)).all()
    return len(run_count), len(grade_count)


def _expected_grade_rows(records) -> int:
    def count(grade):
        return 0 if grade is None else 1 + sum(count(c) for c in grade.component_results)

    return sum(count(r.grade) for r in records)


def test_records_round_trip_with_grade_trees_steps_and_errors(store: Store) -> None:
    records = make_records(cases=6, repeats=3)
    assert any(r.status == "error" for r in records)
    store.create_evaluation(make_meta("ev-1"))
    assert store.add_runs("ev-1", list(reversed(records))) == len(records)

    loaded = store.load_runs("ev-1")

    assert loaded == _plan_order(records)
    assert loaded[1].grade.component_results[1].component_results[0].metadata == {
        "checked": [1, 12.5]
    }
    assert loaded[1].response.trajectory[2].arguments == {}


def test_json_beyond_what_fast_encoders_handle_round_trips(store: Store) -> None:
    record = make_record(0, 0, 0)
    record.response.output = {"big": 2**80, "surrogate": "\ud800", 3: "int key"}
    store.create_evaluation(make_meta("ev-1"))
    store.add_runs("ev-1", [record])

    (loaded,) = store.load_runs("ev-1")

    assert loaded.response.output == {"big": 2**80, "surrogate": "\ud800", "3": "int key"}


def test_load_runs_filters_by_case_and_agent(store: Store) -> None:
    records = make_records(cases=3, repeats=2)
    store.create_evaluation(make_meta("ev-1"))
    store.add_runs("ev-1", records)

    loaded = store.load_runs("ev-1", case_id="case-001", agent="candidate")

    assert loaded == [
        r for r in records if r.key.case_id == "case-001" and r.key.agent == "candidate"
    ]


def test_writing_a_stored_run_again_changes_nothing(store: Store) -> None:
    records = make_records(cases=4, repeats=2)
    store.create_evaluation(make_meta("ev-1"))
    assert store.add_runs("ev-1", records[:5]) == 5

    assert store.add_runs("ev-1", records) == len(records) - 5
    assert store.add_runs("ev-1", records) == 0

    assert _row_counts(store) == (len(records), _expected_grade_rows(records))
    assert store.load_runs("ev-1") == _plan_order(records)


def test_the_same_key_in_two_evaluations_is_two_runs(store: Store) -> None:
    record = make_record(0, 0, 0)
    for evaluation_id in ("ev-1", "ev-2"):
        store.create_evaluation(make_meta(evaluation_id))
        assert store.add_runs(evaluation_id, [record]) == 1

    assert (
        store.completed_keys("ev-1")
        == store.completed_keys("ev-2")
        == {("p0", "case-000", "baseline", 0)}
    )


def _kill_writer_part_way(url: str, cases: int, repeats: int, after: int) -> None:
    process = subprocess.Popen(
        [sys.executable, str(WRITE_RUNS), url, "ev-1", str(cases), str(repeats), "--slow"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    store_process = int(process.stdout.readline().split()[1])
    for line in process.stdout:
        if int(line.split()[1]) >= after:
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    wait_until_gone(store_process)


def _resume_after_kill(url: str) -> None:
    cases, repeats = 20, 3
    records = make_records(cases, repeats)
    store = open_store(url)
    store.create_evaluation(make_meta("ev-1"))

    _kill_writer_part_way(url, cases, repeats, after=40)

    done = store.completed_keys("ev-1")
    assert 40 <= len(done) < len(records)
    stored = store.load_runs("ev-1")
    assert stored == _plan_order([r for r in records if r.key.as_tuple() in done])
    missing = [r for r in records if r.key.as_tuple() not in done]

    assert store.add_runs("ev-1", missing) == len(records) - len(done)
    assert store.load_runs("ev-1") == _plan_order(records)
    assert _row_counts(store) == (len(records), _expected_grade_rows(records))
    store.close()


@pytest.mark.slow
def test_resume_after_the_writer_process_is_killed_sqlite(sqlite_url: str) -> None:
    _resume_after_kill(sqlite_url)


@pytest.mark.postgres
def test_resume_after_the_writer_process_is_killed_postgres(postgres_url: str) -> None:
    _resume_after_kill(postgres_url)


def _two_writer_processes(url: str) -> None:
    cases, repeats = 15, 4
    records = make_records(cases, repeats)
    store = open_store(url)
    store.create_evaluation(make_meta("ev-1"))
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITE_RUNS), url, "ev-1", str(cases), str(repeats), *extra],
            stdout=subprocess.DEVNULL,
        )
        for extra in ([], ["--reverse"])
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]

    assert store.load_runs("ev-1") == _plan_order(records)
    assert _row_counts(store) == (len(records), _expected_grade_rows(records))
    store.close()


@pytest.mark.postgres
def test_two_writer_processes_into_one_evaluation_lose_and_duplicate_nothing_postgres(
    postgres_url: str,
) -> None:
    _two_writer_processes(postgres_url)


@pytest.mark.slow
def test_two_writer_processes_into_one_evaluation_lose_and_duplicate_nothing_sqlite(
    sqlite_url: str,
) -> None:
    _two_writer_processes(sqlite_url)
