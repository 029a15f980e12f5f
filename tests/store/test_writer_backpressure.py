"""The run writer holds a bounded number of runs: when the database lags, adding waits."""

from __future__ import annotations

import threading

from records import make_meta, make_records

import evals.store.writer as writer_module
from evals.store import open_store
from evals.store.writer import RunWriter


def test_add_waits_while_the_queue_is_full_and_every_run_is_stored(sqlite_url, monkeypatch):
    store = open_store(sqlite_url)
    store.create_evaluation(make_meta("ev-1"))
    database_free = threading.Event()
    real_insert = writer_module.insert_runs

    def slow_insert(engine, evaluation_id, batch):
        database_free.wait()
        return real_insert(engine, evaluation_id, batch)

    monkeypatch.setattr(writer_module, "insert_runs", slow_insert)
    records = make_records(4, 3)
    writer = RunWriter(store.engine, "ev-1", batch_size=1, max_delay_s=0.0, max_queued=2)
    producer = threading.Thread(target=lambda: [writer.add(r) for r in records])
    producer.start()
    producer.join(timeout=0.5)
    assert producer.is_alive()  # blocked: one run in the writer's hands, two queued
    assert writer._queue.qsize() == 2
    database_free.set()
    producer.join()
    writer.close()
    assert writer.written == len(records)
    assert len(store.load_runs("ev-1")) == len(records)
    store.close()
