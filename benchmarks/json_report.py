"""What `-o out.json` costs: `evals run` on 1000 tests x 5 repeats of the echo provider,
without a report and with promptfoo's JSON report, measured alternately.

Each measurement is a fresh `evals run SUITE --no-progress --concurrency 32` process with
its default SQLite store (fresh each time) and terminal summary, timed end to end, with the
peak resident memory of its process tree (the harness, the store process and the report
process). The two modes alternate so that load on a shared machine hits both alike; the
medians and their ratio are printed, with the report's size, and the median of the ratios of
the runs measured one after the other (which the machine's drift over the minutes moves
less than the ratio of the medians).

    python benchmarks/json_report.py [--cases 1000] [--repeat 5] [--measurements 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from workload import Measurement, machine_description, measure_command, write_suite


def measure(suite: Path, directory: Path, concurrency: int, report: bool) -> Measurement:
    """One `evals run` of `suite`, with `-o out.json` when `report`."""
    shutil.rmtree(directory / ".evals", ignore_errors=True)
    out = directory / "out.json"
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", "evals", "run", str(suite), "--no-progress"]
    command += ["--concurrency", str(concurrency)]
    if report:
        command += ["-o", str(out)]
    result = measure_command(command, cwd=directory)
    if result.returncode not in (0, 100):
        raise SystemExit(f"evals run exited {result.returncode}:\n{result.output[-3000:]}")
    return result


def main() -> None:
    """Measure both modes alternately and print medians, memory and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--measurements", type=int, default=5)
    args = parser.parse_args()
    print("\n".join(machine_description()))
    print(f"workload: {args.cases} tests x {args.repeat} repeats, echo provider, 4 assertions")
    samples: dict[bool, list[Measurement]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="evals-json-report-") as tmp:
        directory = Path(tmp)
        suite = write_suite(directory, args.cases, "echo", args.concurrency, args.repeat)
        for _ in range(args.measurements):
            for report in (False, True):
                samples[report].append(measure(suite, directory, args.concurrency, report))
        size_mb = (directory / "out.json").stat().st_size / 1e6
    print(f"{'mode':<16} {'wall s':>7} {'peak MB':>8}  all walls")
    medians = {}
    for report, label in ((False, "no report"), (True, "-o out.json")):
        walls = [s.wall_s for s in samples[report]]
        peak = statistics.median(s.peak_rss_mb for s in samples[report])
        medians[report] = statistics.median(walls)
        shown = " ".join(f"{w:.2f}" for w in walls)
        print(f"{label:<16} {medians[report]:>7.2f} {peak:>8.0f}  {shown}")
    ratio = medians[True] / medians[False]
    print(f"report: {size_mb:.1f} MB; with the report the run takes {ratio:.2f}x as long")
    paired = statistics.median(
        with_report.wall_s / without.wall_s
        for without, with_report in zip(samples[False], samples[True], strict=True)
    )
    print(f"median of the ratios of each measurement's two runs (taken in turn): {paired:.2f}x")


if __name__ == "__main__":
    main()
