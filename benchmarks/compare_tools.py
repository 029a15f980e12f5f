"""evals, promptfoo and inspect_ai side by side on the same workload.

Each tool runs 1000 tests x 5 repeats with four deterministic assertions (equals,
contains, starts-with, regex) at 32 runs in flight, twice: with an echo provider and
with a Python provider that echoes the prompt. Every command is a fresh process timed
end to end. Wall times come from runs nothing else watches; the peak resident memory of
the whole process tree (promptfoo's Python provider runs in child processes) from separate
runs sampled every 20 ms (`--memory-measurements`), since the sampler's walk of the process
tree takes CPU from the tool it times. Each measurement is repeated and the median shown;
the tools take turns, one measurement each per round, so they run in the same minutes, and
each peer's line is followed by the median of its per-round ratios to evals (each peer run
paired with the evals run just before it), which a machine whose speed drifts over the
rounds moves less than the ratio of the medians.

Settings, chosen so that every tool does the same work:
- evals: `evals run SUITE --no-progress --concurrency 32`, writing its default SQLite
  store (a fresh one per measurement) and printing its terminal summary.
- promptfoo: `promptfoo eval -c SUITE --repeat 5 -j 32 --no-cache --no-table
  --no-progress-bar`, writing its own SQLite database (its default, like evals) in a
  fresh HOME per measurement; telemetry, update checks and debug/error log files off.
  `--promptfoo-no-write` adds `--no-write`.
- `--json-report` adds `-o out.json` to both evals and promptfoo, so each side also writes
  its promptfoo-format JSON report (a previous file is removed before each measurement).
- inspect_ai: `inspect_workload.py`, an inspect task over the same samples with
  `mockllm/model` (a fixed answer for the echo workload, a Python echo function for the
  Python one), four equivalent scorers, `epochs=5`, `max_connections=max_samples=32`,
  writing its default `.eval` log.

    python benchmarks/compare_tools.py --promptfoo /path/to/node_modules/.bin/promptfoo

promptfoo is taken from `--promptfoo`, then from PATH, else `npm install promptfoo@0.121`
into the work folder; inspect_ai from `--inspect-python`, else a venv in the work folder.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from workload import (
    Measurement,
    machine_description,
    measure_command,
    median_measurement,
    write_suite,
)

HERE = Path(__file__).resolve().parent
WORKLOADS = {"echo": "echo", "python": "python-sync"}
PROMPTFOO_VERSION = "0.121"


def find_promptfoo(explicit: str | None, work: Path) -> Path:
    """The promptfoo CLI: the given one, one on PATH, or a fresh npm install in `work`."""
    if explicit:
        return Path(explicit)
    on_path = shutil.which("promptfoo")
    if on_path:
        return Path(on_path)
    installed = work / "promptfoo" / "node_modules" / ".bin" / "promptfoo"
    if not installed.exists():
        (work / "promptfoo").mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", f"promptfoo@{PROMPTFOO_VERSION}"],
            cwd=work / "promptfoo",
            check=True,
        )
    return installed


def find_inspect_python(explicit: str | None, work: Path) -> Path:
    """A Python with inspect_ai: the given one, or a venv in `work` made on first use."""
    if explicit:
        return Path(explicit)
    python = work / "inspect-venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(work / "inspect-venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "inspect_ai"], check=True)
    return python


def run_evals(
    suite: Path, run_dir: Path, args: argparse.Namespace, *, sample_memory: bool
) -> Measurement:
    """One `evals run` with a fresh default store."""
    shutil.rmtree(run_dir / ".evals", ignore_errors=True)
    command = [sys.executable, "-m", "evals", "run", str(suite), "--no-progress"]
    command += ["--concurrency", str(args.concurrency), "--repeat", str(args.repeat)]
    command += json_report_arguments(run_dir, args)
    return measure_command(
        command, cwd=run_dir, timeout_s=args.timeout, sample_memory=sample_memory
    )


def json_report_arguments(run_dir: Path, args: argparse.Namespace) -> list[str]:
    """`-o out.json` when the JSON report is measured (a previous file is removed first)."""
    if not args.json_report:
        return []
    report = run_dir / "out.json"
    report.unlink(missing_ok=True)
    return ["-o", str(report)]


def run_promptfoo(
    promptfoo: Path, suite: Path, run_dir: Path, args: argparse.Namespace, *, sample_memory: bool
) -> Measurement:
    """One `promptfoo eval` with a fresh HOME (so a fresh database), no cache, no table."""
    home = run_dir / "promptfoo-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    command = [str(promptfoo), "eval", "-c", str(suite), "--repeat", str(args.repeat)]
    command += ["-j", str(args.concurrency), "--no-cache", "--no-table", "--no-progress-bar"]
    if args.promptfoo_no_write:
        command.append("--no-write")
    command += json_report_arguments(run_dir, args)
    env = {
        "HOME": str(home),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        # promptfoo 0.121's file logger can crash the process at exit ("write after end")
        # after a complete evaluation; evals writes no log files either.
        "PROMPTFOO_DISABLE_DEBUG_LOG": "1",
        "PROMPTFOO_DISABLE_ERROR_LOG": "1",
        "PROMPTFOO_PYTHON": shutil.which("python3") or sys.executable,
    }
    return measure_command(
        command, cwd=run_dir, env=env, timeout_s=args.timeout, sample_memory=sample_memory
    )


def run_inspect(
    python: Path, mode: str, run_dir: Path, args: argparse.Namespace, *, sample_memory: bool
) -> Measurement:
    """One inspect_ai evaluation of the same samples, logging to a fresh folder."""
    logs = run_dir / "inspect-logs"
    shutil.rmtree(logs, ignore_errors=True)
    command = [str(python), str(HERE / "inspect_workload.py"), str(args.cases)]
    command += [str(args.repeat), str(args.concurrency), mode, str(logs)]
    return measure_command(
        command, cwd=run_dir, timeout_s=args.timeout, sample_memory=sample_memory
    )


@dataclass
class ToolRun:
    """One workload's runs of each tool, as the command line asked for them."""

    workload: str
    suite: Path
    run_dir: Path
    args: argparse.Namespace
    promptfoo: Path | None
    inspect_python: Path | None

    def measure(self, tool: str, *, sample_memory: bool) -> Measurement:
        """One run of `tool`, timed alone or with its process tree's memory sampled."""
        if tool == "evals":
            return run_evals(self.suite, self.run_dir, self.args, sample_memory=sample_memory)
        if tool == "promptfoo":
            assert self.promptfoo is not None
            return run_promptfoo(
                self.promptfoo, self.suite, self.run_dir, self.args, sample_memory=sample_memory
            )
        assert self.inspect_python is not None
        return run_inspect(
            self.inspect_python, self.workload, self.run_dir, self.args, sample_memory=sample_memory
        )


def main() -> None:
    """Measure every tool on every workload and print times, memory and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--measurements", type=int, default=3, help="repeats of each timing")
    parser.add_argument(
        "--memory-measurements",
        type=int,
        default=2,
        choices=range(1, 101),
        metavar="N",
        help="sampled runs for peak memory (1-100)",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per tool run")
    parser.add_argument("--tools", default="evals,promptfoo,inspect_ai")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--promptfoo", help="promptfoo CLI to use")
    parser.add_argument("--promptfoo-no-write", action="store_true")
    parser.add_argument(
        "--json-report", action="store_true", help="both tools also write -o out.json"
    )
    parser.add_argument("--inspect-python", help="a Python interpreter with inspect_ai")
    parser.add_argument(
        "--work",
        default=str(Path(tempfile.gettempdir()) / "evals-compare"),
        help="folder for installed peers (kept between invocations)",
    )
    args = parser.parse_args()
    tools = args.tools.split(",")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    promptfoo = find_promptfoo(args.promptfoo, work) if "promptfoo" in tools else None
    inspect_python = (
        find_inspect_python(args.inspect_python, work) if "inspect_ai" in tools else None
    )
    print("\n".join(machine_description()))
    print(
        f"workload: {args.cases} tests x {args.repeat} repeats, 4 assertions, "
        f"concurrency {args.concurrency}, median of {args.measurements}"
        + (", each tool writing its JSON report (-o out.json)" if args.json_report else "")
    )
    header = f"{'workload':<9} {'tool':<11} {'wall s':>8} {'peak MB':>8} {'evals faster':>13}"
    print(f"{header} {'evals lighter':>14}  all walls")
    with tempfile.TemporaryDirectory(prefix="evals-compare-run-") as tmp:
        run_dir = Path(tmp)
        for workload, provider in WORKLOADS.items():
            if workload not in args.workloads.split(","):
                continue
            suite = write_suite(run_dir, args.cases, provider, args.concurrency, args.repeat)
            baseline: Measurement | None = None
            tool_run = ToolRun(workload, suite, run_dir, args, promptfoo, inspect_python)
            # Round by round, each tool once, so every tool meets the same minutes of the
            # machine (a slow minute does not fall on one tool's measurements only).
            samples_of: dict[str, list[Measurement]] = {tool: [] for tool in tools}
            for _ in range(args.measurements):
                for tool in tools:
                    samples_of[tool].append(tool_run.measure(tool, sample_memory=False))
            peaks_of: dict[str, list[Measurement]] = {tool: [] for tool in tools}
            for _ in range(args.memory_measurements):
                for tool in tools:
                    peaks_of[tool].append(tool_run.measure(tool, sample_memory=True))
            for tool in tools:
                samples = samples_of[tool]
                failed = [s for s in samples + peaks_of[tool] if s.returncode not in (0, 100)]
                if failed:
                    print(f"{tool} failed ({failed[0].returncode}):\n{failed[0].output[-2000:]}")
                    continue
                timed = median_measurement(samples)
                peak = median_measurement(peaks_of[tool]).peak_rss_mb if peaks_of[tool] else 0.0
                result = Measurement(timed.wall_s, peak, timed.returncode, timed.output)
                if tool == "evals":
                    baseline = result
                ratios = ("", "")
                if baseline is not None and tool != "evals":
                    ratios = (
                        f"{result.wall_s / baseline.wall_s:.1f}x",
                        f"{result.peak_rss_mb / baseline.peak_rss_mb:.1f}x",
                    )
                walls = " ".join(f"{s.wall_s:.2f}" for s in samples)
                print(
                    f"{workload:<9} {tool:<11} {result.wall_s:>8.2f} {result.peak_rss_mb:>8.0f} "
                    f"{ratios[0]:>13} {ratios[1]:>14}  {walls}",
                    flush=True,
                )
                if baseline is not None and tool != "evals":
                    paired = statistics.median(
                        peer.wall_s / own.wall_s
                        for peer, own in zip(samples, samples_of["evals"], strict=True)
                    )
                    print(f"{'':<21} median of the per-round ratios: evals {paired:.1f}x faster")


if __name__ == "__main__":
    main()
