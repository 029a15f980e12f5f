"""How the Ray executor scales over nodes: a sleeping agent on 1, 2 and 4 simulated nodes.

Each node is a `ray.cluster_utils.Cluster` node with one CPU, so one worker actor running
`--concurrency` runs at once; the agent sleeps `--sleep` seconds (asyncio) and answers,
graded by one `contains` assertion. The ideal wall time is runs x sleep / (nodes x
concurrency). For each cluster size it prints the wall time (from submitting the plan to
the last record at the driver, worker start-up included), the time to the first record,
the efficiency against the ideal, and the overhead per run against the local executor
running the same plan at the same total concurrency in this process. Simulated nodes
share this machine's cores, so efficiency here is a floor: the nodes of a real cluster
do not compete for one CPU.

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
            "per node\n"
            f"{'executor':>10} {'nodes':>5} {'wall s':>8} {'ideal s':>8} {'first s':>8} "
            f"{'efficiency':>10} {'overhead ms/run':>16} {'vs local':>9}"
        )
        for nodes in (int(n) for n in args.nodes.split(",")):
            concurrency = nodes * args.concurrency
            ideal = args.runs * args.sleep / concurrency
            local = LocalExecutor(
                suite, concurrency=concurrency, timeout_s=None, tracer=NULL_TRACER
            )
            local_wall, local_first, _ = measure(local, planned)
            local_overhead = (local_wall - ideal) / args.runs * 1000
            print(
                f"{'local':>10} {'-':>5} {local_wall:>8.2f} {ideal:>8.2f} {local_first:>8.2f} "
                f"{ideal / local_wall:>10.0%} {local_overhead:>16.2f} {'':>9}",
                flush=True,
            )
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
            try:
                for _ in range(nodes):
                    cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes()
                ray.init(address=cluster.address, log_to_driver=False)
                remote = RayExecutor(suite, meta=meta, concurrency=args.concurrency, timeout_s=None)
                wall, first, count = measure(remote, planned)
                assert count == args.runs, f"{count} records for {args.runs} runs"
            finally:
                ray.shutdown()
                cluster.shutdown()
            overhead = (wall - ideal) / args.runs * 1000
            print(
                f"{'ray':>10} {nodes:>5} {wall:>8.2f} {ideal:>8.2f} {first:>8.2f} "
                f"{ideal / wall:>10.0%} {overhead:>16.2f} {overhead - local_overhead:>+9.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
