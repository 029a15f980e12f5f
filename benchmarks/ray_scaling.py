"""How the Ray executor scales over nodes: a sleeping agent on 1, 2 and 4 simulated nodes.

Each node is a `ray.cluster_utils.Cluster` node with one CPU, so one worker actor running
`--concurrency` runs at once; the agent sleeps `--sleep` seconds (asyncio) and answers,
graded by one `contains` assertion. The ideal wall time is runs x sleep / (nodes x
concurrency). For each cluster size it prints the wall time (from submitting the plan
to the last record at the driver, worker start-up included), the start-up (time to the
first record, less one run), the efficiency against the ideal over the whole and over
the steady part after start-up, and the overhead per run, whole and steady, the latter
against the local executor running the same plan at the same total concurrency in this
process. Simulated nodes share this machine's cores, so efficiency here is a floor: the
nodes of a real cluster do not compete for one CPU.

    python benchmarks/ray_scaling.py                      # 2000 runs on 1, 2, 4 nodes
    python benchmarks/ray_scaling.py --runs 500 --nodes 1,2
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from workload import machine_description

AGENT = """
import asyncio


async def call_api(prompt, options, context):
    await asyncio.sleep(options["config"]["sleep"])
    return {"output": "slept " + prompt}
"""


def write_suite(folder: Path, runs: int, sleep: float) -> Path:
    """A suite of `runs` cases (one repeat) over the sleeping agent."""
    (folder / "agent.py").write_text(AGENT)
    tests = "\n".join(f"  - vars: {{n: {i}}}" for i in range(runs))
    (folder / "suite.yaml").write_text(
        f"""prompts: ["{{{{n}}}}"]
providers:
  - {{id: file://agent.py, label: sleeper, config: {{sleep: {sleep}}}}}
defaultTest: {{assert: [{{type: contains, value: slept}}]}}
tests:
{tests}
"""
    )
    return folder / "suite.yaml"


def measure(executor: object, planned: list) -> tuple[float, float, int]:
    """(wall s, s to the first record, records) of one executor over the plan."""
    stamps: list[float] = []
    start = time.perf_counter()
    asyncio.run(executor.run(planned, lambda record: stamps.append(time.perf_counter())))  # type: ignore[attr-defined]
    return time.perf_counter() - start, stamps[0] - start, len(stamps)


def main() -> None:
    """Measure the local executor, then the Ray executor on each cluster size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--nodes", default="1,2,4", help="comma-separated node counts")
    parser.add_argument("--sleep", type=float, default=0.2, help="seconds per agent call")
    parser.add_argument("--concurrency", type=int, default=16, help="runs at once per node")
    args = parser.parse_args()

    import ray
    from ray.cluster_utils import Cluster

    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import new_meta
    from evals.plan.runs import build_plan
    from evals.run.local import LocalExecutor
    from evals.run.ray_executor import RayExecutor
    from evals.suite import load_suite
    from evals.tracing import NULL_TRACER

    print("\n".join(machine_description()))
    with tempfile.TemporaryDirectory(prefix="evals-ray-scaling-") as tmp:
        suite = load_suite(write_suite(Path(tmp), args.runs, args.sleep))
        planned = list(build_plan(suite, 1))
        meta = new_meta(suite, RunOptions(), 1)
        print(
            f"{args.runs} runs x {args.sleep * 1000:.0f} ms, {args.concurrency} runs at once "
            "per node; start: until the first record, less one run; steady: the rest\n"
            f"{'executor':>8} {'nodes':>5} {'wall s':>7} {'ideal s':>7} {'start s':>7} "
            f"{'efficiency':>10} {'steady eff':>10} {'ms/run':>7} {'steady ms/run':>13} "
            f"{'vs local':>8}"
        )
        for nodes in (int(n) for n in args.nodes.split(",")):
            concurrency = nodes * args.concurrency
            ideal = args.runs * args.sleep / concurrency
            local = LocalExecutor(
                suite, concurrency=concurrency, timeout_s=None, tracer=NULL_TRACER
            )
            local_steady = report("local", "-", measure(local, planned), ideal, args, None)
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
            try:
                for _ in range(nodes):
                    cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes()
                ray.init(address=cluster.address, log_to_driver=False)
                remote = RayExecutor(suite, meta=meta, concurrency=args.concurrency, timeout_s=None)
                measured = measure(remote, planned)
                assert measured[2] == args.runs, f"{measured[2]} records for {args.runs} runs"
            finally:
                ray.shutdown()
                cluster.shutdown()
            report("ray", str(nodes), measured, ideal, args, local_steady)


def report(
    name: str,
    nodes: str,
    measured: tuple[float, float, int],
    ideal: float,
    args: argparse.Namespace,
    local_steady: float | None,
) -> float:
    """Print one row; returns the steady overhead per run in ms."""
    wall, first, _ = measured
    start = max(0.0, first - args.sleep)
    steady_wall = wall - start
    overhead = (wall - ideal) / args.runs * 1000
    steady = (steady_wall - ideal) / args.runs * 1000
    versus = "" if local_steady is None else f"{steady - local_steady:+.2f}"
    print(
        f"{name:>8} {nodes:>5} {wall:>7.2f} {ideal:>7.2f} {start:>7.2f} "
        f"{ideal / wall:>10.0%} {ideal / steady_wall:>10.0%} {overhead:>7.2f} {steady:>13.2f} "
        f"{versus:>8}",
        flush=True,
    )
    return steady


if __name__ == "__main__":
    main()
