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

The commands that read a stored evaluation are measured with `--paths`: `merge` (four
shard stores of one nightly into one store), `regrade` (the merged nightly graded again),
`compare` (two merged nightlies, `evals compare`) and `nightly` (`evals ci nightly` merging
the second night's shards and comparing it with the first, every report written). The
shards are run once per size (echo agent, not measured) and kept in `--work` so the same
stores serve several measurements, for example of two builds (`PYTHONPATH=/other/checkout`):

    python benchmarks/memory.py --runs 100000 --paths merge,regrade,compare,nightly --work /tmp/m
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from workload import Measurement, machine_description, measure_command, write_suite

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
    parser.add_argument("--paths", default="run", help="run, " + ", ".join(STORED_PATHS))
    parser.add_argument("--work", type=Path, default=None, help="keeps the shards (--paths)")
    args = parser.parse_args()
    print("\n".join(machine_description()))
    stored = [path for path in args.paths.split(",") if path != "run"]
    if stored:
        _measure_stored(args, stored)
    if "run" not in args.paths.split(","):
        return
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


STORED_PATHS = ("merge", "regrade", "compare", "nightly")
SHARDS = 4
ON_MAIN = {"GITHUB_REF_NAME": "main"}  # the nightlies are main's


def _measure_stored(args: argparse.Namespace, paths: list[str]) -> None:
    """Measure the commands that read stored evaluations, at each size of `--runs`."""
    if any(path not in STORED_PATHS for path in paths):
        raise SystemExit(f"--paths: choose among run, {', '.join(STORED_PATHS)}")
    print(f"{'runs':>8} {'command':>8} {'wall s':>8} {'us/run':>7} {'peak MB':>8}  load")
    with tempfile.TemporaryDirectory(prefix="evals-memory-") as tmp:
        for runs in (int(value) for value in args.runs.split(",")):
            work = (args.work or Path(tmp)) / f"runs-{runs}"
            suite = _shards(work, runs, args.cases, args.timeout)
            for path in paths:
                command = _stored_command(path, work, suite)
                result = measure_command(command, cwd=work, env=ON_MAIN, timeout_s=args.timeout)
                if result.returncode not in (0, 1, 100):
                    raise SystemExit(f"{' '.join(command)} failed:\n{result.output[-3000:]}")
                load = " ".join(f"{value:.1f}" for value in os.getloadavg())
                print(
                    f"{runs:>8} {path:>8} {result.wall_s:>8.1f} "
                    f"{result.wall_s / runs * 1e6:>7.0f} {result.peak_rss_mb:>8.0f}  {load}",
                    flush=True,
                )


def _shards(work: Path, runs: int, cases: int, timeout: float) -> Path:
    """Two nightlies of `runs` runs each as `SHARDS` shard stores (night-1, night-2), the
    two merged into `merged.db` (what `regrade` and `compare` read) and the first alone
    into `night-1.db` (the history `nightly` starts from); made once."""
    repeat = max(1, runs // cases)
    suite = write_suite(work, cases, "echo", CONCURRENCY["echo"], repeat)
    done = work / "shards.done"
    if done.exists():
        return suite
    for night in (1, 2):
        folder = work / f"night-{night}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for index in range(1, SHARDS + 1):
            command = [sys.executable, "-m", "evals", "run", str(suite), "--quiet"]
            command += ["--no-progress", "--shard", f"{index}/{SHARDS}", "--env", "nightly"]
            command += ["--evaluation-id", f"night-{night}", "--seed", str(night)]
            command += ["--store", str(folder / f"shard-{index}.db")]
            result = _setup(command, work, timeout)
            if result.returncode not in (0, 1, 100):
                raise SystemExit(f"shard run failed:\n{result.output[-3000:]}")
        for into in ["merged.db", "night-1.db"] if night == 1 else ["merged.db"]:
            merged = _setup(
                [sys.executable, "-m", "evals", "merge", str(work / into)]
                + [str(p) for p in sorted(folder.glob("shard-*.db"))]
                + ["--suite", str(suite), "--quiet"],
                work,
                timeout,
            )
            if merged.returncode not in (0, 1, 100, 3):
                raise SystemExit(f"merge failed:\n{merged.output[-3000:]}")
    accept = [sys.executable, "-m", "evals", "baseline", "accept", "night-1"]
    accepted = _setup(
        [*accept, "--reason", "benchmark", "--store", str(work / "night-1.db")], work, timeout
    )
    if accepted.returncode != 0:
        raise SystemExit(f"baseline accept failed:\n{accepted.output[-3000:]}")
    done.touch()
    return suite


def _setup(command: list[str], work: Path, timeout: float) -> Measurement:
    """Run a command that prepares a measurement (not measured itself)."""
    return measure_command(command, cwd=work, env=ON_MAIN, timeout_s=timeout, sample_memory=False)


def _stored_command(path: str, work: Path, suite: Path) -> list[str]:
    """The measured command of `path`, reading the stores `_shards` made (each command's
    own output store made anew)."""
    evals = [sys.executable, "-m", "evals"]
    if path == "merge":
        (work / "out.db").unlink(missing_ok=True)
        shards = sorted(str(p) for p in (work / "night-1").glob("shard-*.db"))
        return [*evals, "merge", str(work / "out.db"), *shards, "--suite", str(suite), "--quiet"]
    if path == "regrade":
        shutil.copy(work / "merged.db", work / "regraded.db")
        store = ["--store", str(work / "regraded.db")]
        return [*evals, "regrade", "night-1", *store, "--suite", str(suite), "--quiet"]
    if path == "compare":
        store = ["--store", str(work / "merged.db")]
        return [*evals, "compare", "night-1", "night-2", *store, "--quiet"]
    history = work / "history.db"
    shutil.copy(work / "night-1.db", history)  # night-1: the baseline to compare with
    out = ["--out", str(work / "nightly-out"), "--store", str(history)]
    shards = ["--shards", str(work / "night-2"), "--evaluation-id", "night-2"]
    return [*evals, "ci", "nightly", str(suite), *shards, *out, "--quiet"]


if __name__ == "__main__":
    main()
