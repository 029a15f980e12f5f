"""The Ray executor on a simulated multi-node cluster (`ray.cluster_utils.Cluster`).

One cluster serves the module: a head with no CPU (the driver, the limiter and the
cache) and two worker nodes of one CPU each; the node-kill test adds a third node and
kills it. Every test's agent logs each call (node, start, end) to a file, so what the
workers did is counted, not assumed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.pipeline.verdict import exit_code
from evals.suite import load_suite

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from evals.model.results import RunRecord  # noqa: E402
from evals.plan.runs import build_plan  # noqa: E402
from evals.run.ray_executor import RayExecutor  # noqa: E402

DEMO_SUITE = Path(__file__).resolve().parents[2] / "cases" / "trading-research"
SECRET = "sk-test-0d8c5f0e1e2a"

AGENT = """
import json, os, time
import ray


def call_api(prompt, options, context):
    config = options["config"]
    call = {
        "case": context["evals"]["case"], "repeat": context["repeat"], "start": time.time(),
        "node": ray.get_runtime_context().get_node_id(), "file": __file__, "cwd": os.getcwd(),
    }
    hold = config["hold"]
    # A node about to be killed: its calls outlast the kill.
    call["held"] = os.path.exists(hold) and open(hold).read() == call["node"]
    with open(config["log"], "a") as log:
        log.write(json.dumps(call) + "\\n")
    time.sleep(60 if call["held"] else config.get("sleep", 0.2))
    with open(config["log"], "a") as log:
        log.write(json.dumps({**call, "end": time.time()}) + "\\n")
    if os.environ.get("EVALS_TEST_KEY") != "SECRET":
        raise RuntimeError("no API key in the environment")
    return {"output": "answered"}
""".replace("SECRET", SECRET)


@pytest.fixture(scope="module")
def cluster():
    """A head without CPUs and two one-CPU worker nodes; nodes are declared dead after
    about 1.5 s without a heartbeat."""
    system = {"health_check_period_ms": 500, "health_check_failure_threshold": 3}
    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "_system_config": system})
    for _ in range(2):
        made.add_node(num_cpus=1)
    made.wait_for_nodes()
    ray.init(address=made.address, log_to_driver=False)
    yield made
    ray.shutdown()
    made.shutdown()


def _suite(folder: Path, cases: int, repeat: int, extra: str = "", sleep: float = 0.2) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.py").write_text(AGENT)
    log = folder.parent / f"{folder.name}-calls.jsonl"
    hold = _hold_file(folder)
    tests = "\n".join(f"  - vars: {{n: {i}}}" for i in range(cases))
    (folder / "suite.yaml").write_text(
        f"""prompts: ["question {{{{n}}}}"]
providers:
  - id: file://agent.py
    label: sleepy
    config: {{log: "{log}", sleep: {sleep}, hold: "{hold}"}}
evaluateOptions: {{repeat: {repeat}}}
gates: {{max_error_rate: 0.1}}
{extra}
tests:
{tests}
"""
    )
    return folder


def _hold_file(folder: Path) -> Path:
    """Where a node's id makes the agent's calls that start on that node hang."""
    return folder.parent / f"{folder.name}-hold"


def _calls(folder: Path, ended: bool = True) -> list[dict[str, Any]]:
    """The agent's calls: those that ended, or (`ended=False`) those that started."""
    log = folder.parent / f"{folder.name}-calls.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [call for call in lines if ("end" in call) == ended]


def _options(tmp_path: Path, name: str, **kw: Any) -> RunOptions:
    return RunOptions(
        executor="ray",
        progress=False,
        concurrency=kw.pop("concurrency", 4),
        store_url=str(tmp_path / f"{name}.db"),
        **kw,
    )


def _comparable(result) -> list:
    """Each run's identity, seed, output, cost, tokens and every assertion's verdict but
    latency's (a wall-clock threshold depends on how warm the process is)."""

    def verdicts(record: RunRecord) -> list:
        parts = record.grade.component_results if record.grade else []
        kinds = [((part.assertion or {}).get("type"), part.passed) for part in parts]
        return [(kind, passed) for kind, passed in kinds if kind != "latency"]

    return sorted(
        (
            r.key.as_tuple(),
            r.seed,
            str(r.response.output),
            r.response.cost,
            r.response.token_usage.get("total"),
            r.error,
            verdicts(r),
        )
        for r in result.records
    )


@pytest.mark.slow
def test_demo_on_two_nodes_matches_the_local_executor(tmp_path: Path, cluster: Cluster) -> None:
    def run(executor: str):
        options = _options(tmp_path, executor, environment="pr", repeat=1)
        return run_evaluation(load_suite(DEMO_SUITE), replace(options, executor=executor))

    remote, local = run("ray"), run("local")
    assert len(remote.records) == len(local.records) > 0
    assert _comparable(remote) == _comparable(local)
    with sqlite3.connect(tmp_path / "ray.db") as db:
        stored = db.execute("SELECT agent, case_id, repeat, count(*) FROM runs GROUP BY 1, 2, 3")
        assert {row[3] for row in stored} == {1}
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == len(local.records)


def test_passed_variables_reach_every_worker_and_are_never_stored(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # set after the nodes started: only pass_env can bring it to their workers
    monkeypatch.setenv("EVALS_TEST_KEY", SECRET)
    without = _suite(tmp_path / "without", cases=6, repeat=2)
    lacking = run_evaluation(load_suite(without), _options(tmp_path, "without"))
    assert {r.status for r in lacking.records} == {"error"}
    assert all("no API key" in (r.error or "") for r in lacking.records)
    assert exit_code(lacking) == 1  # every worker lacks the key: the build fails

    folder = _suite(tmp_path / "with", cases=6, repeat=2, extra="pass_env: [EVALS_TEST_KEY]")
    result = run_evaluation(load_suite(folder), _options(tmp_path, "with"))
    assert {r.status for r in result.records} == {"pass"}
    assert exit_code(result) == 0
    calls = _calls(folder)
    assert len({call["node"] for call in calls}) == 2
    # the agent ran from the shipped bundle, not from the driver's folder
    assert all(not call["file"].startswith(str(folder)) for call in calls)
    assert all(call["cwd"] != str(folder) for call in calls)
    for store in tmp_path.glob("*.db"):
        assert SECRET.encode() not in store.read_bytes()


def test_requests_per_minute_hold_across_nodes(tmp_path: Path, cluster: Cluster) -> None:
    limits = "limits: {sleepy: {requests_per_minute: 300}}\npass_env: [EVALS_TEST_KEY]"
    folder = _suite(tmp_path / "paced", cases=18, repeat=2, extra=limits, sleep=0.05)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALS_TEST_KEY", SECRET)
        result = run_evaluation(load_suite(folder), _options(tmp_path, "paced", concurrency=8))
    assert {r.status for r in result.records} == {"pass"}
    starts = sorted(call["start"] for call in _calls(folder))
    assert len(starts) == 36
    assert len({call["node"] for call in _calls(folder)}) == 2
    rate = (len(starts) - 1) / (starts[-1] - starts[0])
    print(f"measured {rate:.2f} requests/s under a limit of 5/s")
    assert rate <= 5.0 * 1.05  # the starts are seen at the agent, after a round trip
    # in any one-second window, at most the 5 paced starts (and one for a late grant)
    assert max(sum(1 for s in starts if t <= s < t + 1.0) for t in starts) <= 6


def test_calls_in_flight_hold_across_nodes(tmp_path: Path, cluster: Cluster) -> None:
    limits = "limits: {'*': {concurrency: 2}}\npass_env: [EVALS_TEST_KEY]"
    folder = _suite(tmp_path / "capped", cases=8, repeat=2, extra=limits, sleep=0.3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALS_TEST_KEY", SECRET)
        result = run_evaluation(load_suite(folder), _options(tmp_path, "capped", concurrency=4))
    assert {r.status for r in result.records} == {"pass"}
    calls = _calls(folder)
    edges = sorted([(c["start"], 1) for c in calls] + [(c["end"], -1) for c in calls])
    in_flight = peak = 0
    for _, step in edges:
        in_flight += step
        peak = max(peak, in_flight)
    assert peak == 2  # 2 nodes x 4 runs per worker would allow 8
    assert len({call["node"] for call in calls}) == 2


def test_a_node_killed_mid_run_loses_no_run_and_repeats_no_stored_one(
    tmp_path: Path, cluster: Cluster
) -> None:
    doomed = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    folder = _suite(tmp_path / "killed", cases=15, repeat=2, sleep=0.4)
    suite = load_suite(folder)
    planned = list(build_plan(suite, 2))
    reported: list[tuple[RunRecord, float]] = []
    killed_at: list[float] = []
    finished = threading.Event()

    def on_doomed() -> tuple[int, bool]:
        """Calls ended on the doomed node, and whether one started since the hold."""
        try:
            started, ended = _calls(folder, ended=False), _calls(folder)
        except ValueError:  # a line being written
            return 0, False
        held = any(c.get("held") and c["node"] == doomed.node_id for c in started)
        return sum(c["node"] == doomed.node_id for c in ended), held

    def kill_once_a_run_is_in_flight_there() -> None:
        # Once some runs were stored and one ended on the doomed node, its next calls hang
        # (the hold file), and the node is killed while one hangs: a call in flight there,
        # whatever the machine's load, and not one that ends while the node is removed.
        while not finished.wait(0.02):
            ended_there, held = on_doomed()
            if len(reported) >= 6 and ended_there and not _hold_file(folder).exists():
                _hold_file(folder).write_text(doomed.node_id)
            if held:
                killed_at.append(time.time())
                cluster.remove_node(doomed, allow_graceful=False)
                return

    def on_record(record: RunRecord) -> None:
        reported.append((record, time.time()))

    killer = threading.Thread(target=kill_once_a_run_is_in_flight_there)
    killer.start()
    executor = RayExecutor(
        suite, meta=_meta(suite), concurrency=3, timeout_s=None, pass_env=("EVALS_TEST_KEY",)
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALS_TEST_KEY", SECRET)
        import asyncio

        try:
            asyncio.run(executor.run(planned, on_record))
        finally:
            finished.set()
            killer.join()
    assert killed_at, "the doomed node never had a run in flight"
    keys = Counter(record.key.as_tuple() for record, _ in reported)
    assert sorted(keys) == sorted(run.key.as_tuple() for run in planned)
    assert set(keys.values()) == {1}  # every run reported (stored) exactly once
    assert {record.status for record, _ in reported} == {"pass"}
    calls = Counter((c["case"], c["repeat"]) for c in _calls(folder, ended=False))
    by_case = {run.key.as_tuple(): (run.case.id, run.key.repeat) for run in planned}
    before_kill = [r for r, at in reported if at < killed_at[0]]
    assert before_kill and all(calls[by_case[r.key.as_tuple()]] == 1 for r in before_kill)
    repeated = [key for key, count in calls.items() if count > 1]
    print(f"{len(repeated)} runs in flight on the killed node were run again")
    assert repeated  # the killed node had runs in flight, and they were rescheduled
    assert all(count <= 2 for count in calls.values())
    assert len({c["node"] for c in _calls(folder)}) == 3


def _meta(suite):
    from evals.pipeline.evaluation import new_meta

    return new_meta(suite, RunOptions(), 2)


def test_workers_that_cannot_start_give_infra_rows_that_fail_the_build(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _suite(tmp_path / "broken", cases=3, repeat=2)
    agent = "import module_only_on_the_driver\n\n\ndef call_api(prompt, options, context):\n"
    (folder / "agent.py").write_text(agent + "    return {'output': prompt}\n")
    # The driver imports the agent while loading the suite; the workers' bundle lacks the module.
    driver_only = tmp_path / "driver-only"
    driver_only.mkdir()
    (driver_only / "module_only_on_the_driver.py").write_text("")
    monkeypatch.syspath_prepend(str(driver_only))
    result = run_evaluation(load_suite(folder), _options(tmp_path, "broken"))
    assert len(result.records) == 6
    assert {r.error_kind for r in result.records} == {"infra"}
    assert all("module_only_on_the_driver" in (r.error or "") for r in result.records)
    assert exit_code(result) == 1


def test_an_agent_that_loads_nowhere_gives_the_error_rows_a_local_run_gives(
    tmp_path: Path, cluster: Cluster
) -> None:
    folder = _suite(tmp_path / "no-function", cases=2, repeat=2)
    (folder / "agent.py").write_text("def answer(prompt, options, context):\n    return {}\n")
    result = run_evaluation(load_suite(folder), _options(tmp_path, "no-function"))
    assert len(result.records) == 4
    assert {r.error_kind for r in result.records} == {"agent_error"}
    assert all("Function 'call_api' not found" in (r.error or "") for r in result.records)


def test_a_worker_the_cluster_cannot_place_does_not_hold_up_the_run(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One worker more than the cluster has CPUs: it never starts, and the runs go to the
    workers that did once the grace after the first answer has passed."""
    import asyncio

    from evals.run import ray_executor

    monkeypatch.setattr(ray_executor, "START_GRACE_S", 2.0)
    folder = _suite(tmp_path / "crowded", cases=3, repeat=2)
    suite = load_suite(folder)
    planned = list(build_plan(suite, 2))
    cpus = int(ray.cluster_resources().get("CPU", 0))
    executor = RayExecutor(
        suite,
        meta=_meta(suite),
        concurrency=2,
        timeout_s=None,
        pass_env=("EVALS_TEST_KEY",),
        workers=cpus + 1,
    )
    records: list[RunRecord] = []
    monkeypatch.setenv("EVALS_TEST_KEY", SECRET)
    started = time.monotonic()
    asyncio.run(executor.run(planned, records.append))
    took = time.monotonic() - started

    assert sorted(r.key.as_tuple() for r in records) == sorted(p.key.as_tuple() for p in planned)
    assert {r.response.output for r in records} == {"answered"}
    assert 2.0 <= took < 120  # the grace, not the start timeout of 600 s


class _CountedPlan:
    """A plan read as an iterable, counting its readings and the runs each has handed out."""

    def __init__(self, suite, repeat: int) -> None:
        self.suite, self.repeat = suite, repeat
        self.readings = 0
        self.handed = 0

    def __iter__(self):
        self.readings += 1
        reading = self.readings
        for run in build_plan(self.suite, self.repeat):
            if reading > 1:
                self.handed += 1
            yield run


def test_the_driver_reads_the_plan_as_workers_have_room(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver never lists the plan: it reads it once for its agents and once for the
    runs, and hands out a run only when a worker has room (2 workers x 2 runs at once)."""
    import asyncio

    folder = _suite(tmp_path / "streamed", cases=6, repeat=4, sleep=0.05)
    suite = load_suite(folder)
    plan = _CountedPlan(suite, 4)
    ahead: list[int] = []
    records: list[RunRecord] = []

    def on_record(record: RunRecord) -> None:
        records.append(record)
        ahead.append(plan.handed - len(records))

    executor = RayExecutor(
        suite, meta=_meta(suite), concurrency=2, timeout_s=None, pass_env=("EVALS_TEST_KEY",)
    )
    monkeypatch.setenv("EVALS_TEST_KEY", SECRET)
    asyncio.run(executor.run(plan, on_record))
    assert plan.readings == 2 and plan.handed == len(records) == 24
    assert {r.response.output for r in records} == {"answered"}
    workers = int(ray.cluster_resources().get("CPU", 0))
    assert max(ahead) <= workers * 2  # never more runs out of the plan than in flight
