"""How `evals run` scales from 1,000 to 100,000 runs: time and peak memory.

The overhead workload (an in-process async echo agent, four deterministic assertions per
case, 5 repeats) with 200, 2,000 and 20,000 cases, run as a whole `evals run` process
with the default SQLite store and the terminal summary. Prints wall time, runs per
second, microseconds per run and the peak resident memory for each size; time should
grow linearly and memory stay flat, since records stream to the store.

    python benchmarks/scaling.py                          # 1k, 10k, 100k runs, median of 3
    python benchmarks/scaling.py --runs 1000,10000 --measurements 1
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from workload import machine_description, measure_command, median_measurement, write_suite

REPEAT = 5


def main() -> None:
    """Measure each size and print the scaling table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="1000,10000,100000", help="comma-separated run counts")
    parser.add_argument("--measurements", type=int, default=3, help="repeats of each timing")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    args = parser.parse_args()
    print("\n".join(machine_description()))
    print(f"{'runs':>8} {'cases':>7} {'wall s':>8} {'runs/s':>8} {'us/run':>8} {'peak MB':>8}")
    with tempfile.TemporaryDirectory(prefix="evals-scaling-") as tmp:
        directory = Path(tmp)
        for runs in (int(value) for value in args.runs.split(",")):
            cases = runs // REPEAT
            suite = write_suite(directory, cases, "python-async", args.concurrency, REPEAT)
            samples = []
            for _ in range(args.measurements):
                shutil.rmtree(directory / ".evals", ignore_errors=True)
                command = [sys.executable, "-m", "evals", "run", str(suite), "--no-progress"]
                samples.append(
                    measure_command(
                        [*command, "--concurrency", str(args.concurrency)],
                        cwd=directory,
                        timeout_s=args.timeout,
                    )
                )
                if samples[-1].returncode != 0:
                    raise SystemExit(f"evals run failed:\n{samples[-1].output[-3000:]}")
            result = median_measurement(samples)
            print(
                f"{runs:>8} {cases:>7} {result.wall_s:>8.2f} {runs / result.wall_s:>8.0f} "
                f"{result.wall_s / runs * 1e6:>8.0f} {result.peak_rss_mb:>8.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
