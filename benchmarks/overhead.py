"""The harness's own cost per run: `evals run` on 1000 cases x 5 repeats of an echo agent.

Runs the whole `evals run` command as a subprocess (default SQLite store, terminal
summary), with an in-process Python agent in its async and sync variants and four
deterministic assertions per case. Reports the whole process's wall time, runs per
second, the harness overhead per run (wall time minus the agent's own time, divided by
the runs) and the peak resident memory. Each measurement is repeated and the median
shown, since a shared machine is noisy.

    python benchmarks/overhead.py                   # 1000 cases x 5 repeats, 3 measurements
    python benchmarks/overhead.py --profile         # also print where the time goes (cProfile)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from workload import machine_description, measure_command, read_agent_seconds, write_suite

VARIANTS = {"async": "python-async", "sync": "python-sync"}


def measure_variant(
    directory: Path, suite: Path, runs: int, measurements: int, concurrency: int
) -> dict[str, float]:
    """Median wall time, agent time, overhead per run and peak memory over `measurements`."""
    walls, agents, peaks = [], [], []
    for attempt in range(measurements):
        shutil.rmtree(directory / ".evals", ignore_errors=True)
        agent_file = directory / f"agent-time-{attempt}.txt"
        agent_file.unlink(missing_ok=True)
        command = [sys.executable, "-m", "evals", "run", str(suite), "--no-progress"]
        result = measure_command(
            [*command, "--concurrency", str(concurrency)],
            cwd=directory,
            env={"EVALS_BENCH_AGENT_TIME": str(agent_file)},
        )
        if result.returncode != 0:
            raise SystemExit(f"evals run exited {result.returncode}:\n{result.output[-3000:]}")
        walls.append(result.wall_s)
        agents.append(read_agent_seconds(agent_file))
        peaks.append(result.peak_rss_mb)
    wall = statistics.median(walls)
    agent = statistics.median(agents)
    return {
        "wall_s": wall,
        "runs_per_s": runs / wall,
        "agent_s": agent,
        "overhead_us": (wall - agent) / runs * 1e6,
        "peak_mb": statistics.median(peaks),
        "walls": walls,
    }


def print_profile(directory: Path, suite: Path, concurrency: int, top: int) -> None:
    """The functions where `evals run` spends its time, by cumulative time."""
    shutil.rmtree(directory / ".evals", ignore_errors=True)
    command = [sys.executable, "-m", "cProfile", "-s", "cumulative", "-m", "evals", "run"]
    command += [str(suite), "--no-progress", "--quiet", "--concurrency", str(concurrency)]
    output = subprocess.run(command, cwd=directory, capture_output=True, text=True).stdout
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    print("\n".join(lines[start : start + top + 1]))


def main() -> None:
    """Measure and print the overhead table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--measurements", type=int, default=3, help="repeats of each timing")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one run")
    parser.add_argument("--top", type=int, default=30, help="profile lines to print")
    args = parser.parse_args()
    runs = args.cases * args.repeat
    print("\n".join(machine_description()))
    print(f"workload: {args.cases} cases x {args.repeat} repeats = {runs} runs, 4 assertions each")
    print(
        f"{'agent':<8} {'wall s':>7} {'runs/s':>8} {'agent s':>8} "
        f"{'overhead/run':>13} {'peak MB':>8}  all walls"
    )
    with tempfile.TemporaryDirectory(prefix="evals-overhead-") as tmp:
        directory = Path(tmp)
        for name, provider in VARIANTS.items():
            suite = write_suite(directory, args.cases, provider, args.concurrency, args.repeat)
            row = measure_variant(directory, suite, runs, args.measurements, args.concurrency)
            walls = " ".join(f"{w:.2f}" for w in row["walls"])
            print(
                f"{name:<8} {row['wall_s']:>7.2f} {row['runs_per_s']:>8.0f} "
                f"{row['agent_s']:>8.4f} {row['overhead_us']:>10.0f} us {row['peak_mb']:>8.0f}"
                f"  {walls}"
            )
        if args.profile:
            suite = write_suite(directory, args.cases, VARIANTS["async"], args.concurrency)
            print_profile(directory, suite, args.concurrency, args.top)


if __name__ == "__main__":
    main()
