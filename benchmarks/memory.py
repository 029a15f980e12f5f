"""Peak memory and time of `evals run` at 10,000, 100,000 and 1,000,000 runs, with and
without each report format.

The workload suite (`workload.py`: four deterministic assertions per case) with a fixed
number of cases and the repeats that make each size, run as a whole `evals run` process
with the default SQLite store; each report format is asked for with `-o`. Two agents:
promptfoo's `echo` provider, and an async Python agent that waits 50 ms per call, run
at high concurrency. Peak memory is that of the whole process tree (harness, store
process and report process), sampled every 20 ms; the load average is printed with each
line, since the machine may be shared.

    python benchmarks/memory.py                                   # every size, agent, report
    python benchmarks/memory.py --runs 10000,100000 --agents echo --reports none,json
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from workload import machine_description, measure_command, write_suite

REPORTS = {
    "none": None,
    "json": "out.json",
    "jsonl": "out.jsonl",
    "csv": "out.csv",
    "yaml": "out.yaml",
    "junit": "out.xml",
    "markdown": "out.md",
    "html": "out.html",
}
CONCURRENCY = {"echo": 32, "python-50ms": 1000}
# YAML's emitter takes about 15 ms a run on a 2-core machine: by default it is measured up
# to 10,000 runs only (name it in --reports to measure it at every size).
LARGEST = {"yaml": 10_000}


def main() -> None:
    """Measure each (size, agent, report) and print one line for each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="10000,100000,1000000", help="comma-separated sizes")
    parser.add_argument("--cases", type=int, default=2000, help="cases of the suite")
    parser.add_argument("--agents", default="echo,python-50ms", help="echo, python-50ms")
    parser.add_argument("--reports", default=None, help=", ".join(REPORTS))
    parser.add_argument("--timeout", type=float, default=7200.0, help="seconds per run")
    args = parser.parse_args()
    print("\n".join(machine_description()))
    print(
        f"{'runs':>8} {'repeat':>6} {'agent':>12} {'report':>9} {'wall s':>8} {'us/run':>7} "
        f"{'peak MB':>8} {'file MB':>8}  load"
    )
    with tempfile.TemporaryDirectory(prefix="evals-memory-") as tmp:
        directory = Path(tmp)
        for runs in (int(value) for value in args.runs.split(",")):
            repeat = max(1, runs // args.cases)
            for agent in args.agents.split(","):
                suite = write_suite(directory, args.cases, agent, CONCURRENCY[agent], repeat)
                for report in (args.reports or ",".join(REPORTS)).split(","):
                    if args.reports is None and runs > LARGEST.get(report, runs):
                        continue
                    _measure(directory, suite, runs, repeat, agent, report, args.timeout)


def _measure(
    directory: Path, suite: Path, runs: int, repeat: int, agent: str, report: str, timeout: float
) -> None:
    shutil.rmtree(directory / ".evals", ignore_errors=True)
    output = REPORTS[report]
    command = [sys.executable, "-m", "evals", "run", str(suite), "--no-progress", "--quiet"]
    command += ["--concurrency", str(CONCURRENCY[agent])]
    if output is not None:
        (directory / output).unlink(missing_ok=True)
        command += ["-o", str(directory / output)]
    result = measure_command(command, cwd=directory, timeout_s=timeout)
    if result.returncode not in (0, 100):
        raise SystemExit(f"evals run failed:\n{result.output[-3000:]}")
    size = (directory / output).stat().st_size / 2**20 if output else 0.0
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"{runs:>8} {repeat:>6} {agent:>12} {report:>9} {result.wall_s:>8.1f} "
        f"{result.wall_s / runs * 1e6:>7.0f} {result.peak_rss_mb:>8.0f} {size:>8.1f}  {load}",
        flush=True,
    )


if __name__ == "__main__":
    main()
