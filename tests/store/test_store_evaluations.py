"""Evaluations in the store: creation, finishing, listing, resuming and baselines."""

from __future__ import annotations

import threading

import pytest
from records import make_meta

from evals.model.errors import SuiteError
from evals.model.summary import GateReport, GateResult, Summary
from evals.store import Store, open_store


def _summary() -> Summary:
    return Summary(
        "trading", "1.2", "fp1", 0.95, case_stats=[], agents=[], tags=[], comparison=None
    )


def _gates() -> GateReport:
    return GateReport(
        [
            GateResult("pass_rate", "pass", 0.8, 0.91, (0.84, 0.95), "above threshold"),
            GateResult("regression", "fail", None, -0.2, (-0.3, -0.1), "candidate worse"),
            GateResult("cost", "undetermined", 0.05, None, None, "no cost data", blocking=False),
        ],
        environment="nightly",
    )


def test_a_created_evaluation_reads_back_as_it_was_written(store: Store) -> None:
    meta = make_meta("ev-1", shard="2/4")
    store.create_evaluation(meta)

    stored = store.get_evaluation("ev-1")

    assert stored is not None
    assert stored.summary is None and stored.gates is None
    for name in (
        "id",
        "suite_id",
        "fingerprint",
        "agents",
        "config",
        "shard",
        "started_at",
        "agent_fingerprints",
        "ci_event",
    ):
        assert getattr(stored, name) == getattr(meta, name)
    assert store.get_evaluation("missing") is None


def test_finishing_stores_status_summary_and_gate_rows(store: Store) -> None:
    meta = make_meta("ev-1")
    store.create_evaluation(meta)
    meta.status, meta.ended_at = "incomplete", meta.started_at + 12.5
    meta.planned_runs, meta.stored_runs = 290, 194

    store.finish_evaluation(meta, _summary(), _gates())
    store.finish_evaluation(meta, _summary(), _gates())

    stored = store.get_evaluation("ev-1")
    assert stored is not None
    assert (stored.status, stored.ended_at) == ("incomplete", meta.started_at + 12.5)
    assert (stored.planned_runs, stored.stored_runs) == (290, 194)
    assert stored.summary == _summary().to_dict()
    assert stored.gates["verdict"] == "fail"
    assert stored.gates["gates"][0]["interval"] == [0.84, 0.95]
    rows = store.gate_results("ev-1")
    assert [(r["name"], r["status"], r["blocking"]) for r in rows] == [
        ("pass_rate", "pass", True),
        ("regression", "fail", True),
        ("cost", "undetermined", False),
    ]
    assert (rows[0]["interval_lo"], rows[0]["interval_hi"], rows[0]["measured"]) == (
        0.84,
        0.95,
        0.91,
    )
    assert rows[2]["interval_lo"] is None and rows[2]["measured"] is None


def test_list_evaluations_filters_and_orders_newest_first(store: Store) -> None:
    specs = [
        ("a", "trading", "fp1", "nightly", "main", 100.0),
        ("b", "trading", "fp2", "pr", "feature", 300.0),
        ("c", "trading", "fp1", "nightly", "main", 200.0),
        ("d", "other", "fp1", "nightly", "main", 400.0),
    ]
    for ident, suite, fingerprint, environment, branch, started in specs:
        store.create_evaluation(
            make_meta(
                ident,
                suite_id=suite,
                fingerprint=fingerprint,
                environment=environment,
                branch=branch,
                started_at=started,
            )
        )

    def ids(**filters):
        return [e.id for e in store.list_evaluations(**filters)]

    assert ids() == ["d", "b", "c", "a"]
    assert ids(suite_id="trading") == ["b", "c", "a"]
    assert ids(suite_id="trading", environment="nightly") == ["c", "a"]
    assert ids(branch="feature") == ["b"]
    assert ids(fingerprint="fp1", limit=2) == ["d", "c"]


def _passing() -> GateReport:
    return GateReport(
        [GateResult("pass_rate", "pass", 0.8, 0.91, (0.84, 0.95), "above threshold")],
        environment="nightly",
    )


def _finished(store: Store, ident: str, gates: GateReport | None = None, **fields) -> None:
    meta = make_meta(ident, **fields)
    store.create_evaluation(meta)
    if meta.status == "complete":
        store.finish_evaluation(meta, _summary(), gates or _passing())


def test_baselines_are_complete_unsharded_trusted_and_newest_first(store: Store) -> None:
    _finished(store, "old", started_at=100.0, status="complete")
    _finished(store, "good", started_at=200.0, status="complete", fingerprint="fp2")
    _finished(store, "running", started_at=300.0, status="running")
    _finished(store, "shard", started_at=400.0, status="complete", shard="1/2")
    _finished(store, "pr", started_at=500.0, status="complete", environment="pr")
    _finished(store, "branch", started_at=600.0, status="complete", branch="feature")
    _finished(store, "other-suite", started_at=700.0, status="complete", suite_id="other")
    _finished(store, "incomplete", started_at=800.0, status="incomplete")
    _finished(store, "from-a-pr", started_at=900.0, status="complete", ci_event="pull_request")
    _finished(
        store, "regraded", started_at=950.0, status="complete", config={"regraded_from": "old"}
    )
    # Complete and trusted, but its gates failed: stored, never a baseline on its own.
    _finished(store, "failed", _gates(), started_at=980.0, status="complete")

    def baseline(**filters):
        found = store.baselines("trading", **filters)
        return found[0].id if found else None

    assert baseline() == "good"
    assert [e.id for e in store.baselines("trading")] == ["good", "old"]
    assert baseline(fingerprint="fp1") == "old"
    assert baseline(fingerprint="fp3") is None
    assert baseline(environment="pr") == "pr"
    assert baseline(environment=None) == "pr"
    assert baseline(environment=None, branch=None) == "branch"
    assert store.baselines("missing") == []
    assert [e.id for e in store.baselines("trading", chosen=False)][:2] == ["failed", "good"]
    statuses = store.baseline_statuses(store.list_evaluations(limit=None))
    assert statuses["failed"].reason == "its gates did not pass (fail)"
    assert statuses["shard"].reason == "never a baseline: shard 1/2"
    assert statuses["from-a-pr"].reason == "never a baseline: a pull request's"


def test_find_resumable_picks_the_named_or_latest_running_evaluation(store: Store) -> None:
    _finished(store, "done", started_at=100.0, status="complete")
    _finished(store, "run-old", started_at=200.0, status="running")
    _finished(store, "run-new", started_at=300.0, status="running")
    _finished(store, "run-fp2", started_at=400.0, status="running", fingerprint="fp2")

    assert store.find_resumable("trading", "fp1", None).id == "run-new"
    assert store.find_resumable("trading", "fp2", None).id == "run-fp2"
    assert store.find_resumable("trading", "fp3", None) is None
    assert store.find_resumable("trading", "fp1", "run-old").id == "run-old"
    assert store.find_resumable("trading", "fp1", "done").id == "done"
    assert store.find_resumable("trading", "fp1", "missing") is None
    with pytest.raises(ValueError, match="fingerprint fp2"):
        store.find_resumable("trading", "fp1", "run-fp2")


def test_find_resumable_refuses_runs_of_other_agent_code(store: Store) -> None:
    _finished(store, "run-v1", started_at=100.0, status="running")
    _finished(
        store,
        "run-v2",
        started_at=200.0,
        status="running",
        agent_fingerprints={"baseline": "baseline-v1", "candidate": "candidate-v2"},
    )
    now = {"baseline": "baseline-v1", "candidate": "candidate-v1"}

    assert store.find_resumable("trading", "fp1", None, now).id == "run-v1"
    assert store.find_resumable("trading", "fp1", None).id == "run-v2"
    with pytest.raises(ValueError, match="agent\\(s\\) candidate"):
        store.find_resumable("trading", "fp1", "run-v2", now)


def test_prune_keeps_the_newest_evaluations_of_each_suite_and_the_latest_baseline(
    store: Store,
) -> None:
    from records import make_records

    _finished(store, "night-old", started_at=100.0, status="complete")
    for index in range(5):
        _finished(
            store, f"pr-{index}", started_at=200.0 + index, status="complete", environment="pr"
        )
    _finished(store, "night-broken", started_at=300.0, status="incomplete")
    _finished(store, "other-1", started_at=50.0, status="complete", suite_id="other")
    store.add_runs("pr-0", make_records(2, 2))

    deleted = store.prune(keep=3)

    assert sorted(deleted) == ["pr-0", "pr-1", "pr-2"]
    remaining = [e.id for e in store.list_evaluations(limit=None)]
    assert remaining == ["night-broken", "pr-4", "pr-3", "night-old", "other-1"]
    assert store.load_runs("pr-0") == []
    assert store.prune(keep=3) == []
    with pytest.raises(ValueError):
        store.prune(keep=0)


def test_two_creators_of_one_id_at_once_leave_one_evaluation_and_one_input_error(
    store_url: str,
) -> None:
    stores = [open_store(store_url) for _ in range(2)]
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def create(store: Store) -> None:
        start.wait()
        try:
            store.create_evaluation(make_meta("same-id"))
            outcomes.append("created")
        except SuiteError as exc:
            assert "--evaluation-id same-id" in exc.message
            outcomes.append("refused")

    threads = [threading.Thread(target=create, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["created", "refused"]
    assert [e.id for e in stores[0].list_evaluations()] == ["same-id"]
    for store in stores:
        store.close()
