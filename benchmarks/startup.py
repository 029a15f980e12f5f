"""What a small evaluation costs from start to exit: `evals run` of a one-test suite.

Three command lines, each a fresh process with a fresh default SQLite store, measured
alternately `--measurements` times: a one-test echo suite (the process, its store process
and the terminal summary), the same with `-o out.json -o out.md` (the JSON report written
by the store process), and an invalid suite (exit 2 before any run). Printed per command:
the median wall time, the median CPU time of the whole process tree (user + system,
including the store process), the peak memory of the tree, and whether the evaluation
imported numpy (from `python -X importtime`).

`--against PATH` measures a second source tree of evals (another checkout, put first on
PYTHONPATH) in the same minutes and prints its medians over this tree's.

    python benchmarks/startup.py [--measurements 5] [--against /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from workload import machine_description, measure_command

HERE = Path(__file__).resolve().parents[1]
SUITE = """\
prompts: ['{{text}}']
providers: [echo]
tests:
  - vars: {text: hello}
    assert: [{type: contains, value: hello}]
"""
INVALID = "prompts: ['{{text}}']\nproviders: [echo]\ntests: [{vars: 3}]\n"
COMMANDS = {
    "1 test": ["suite.yaml"],
    "1 test, -o json md": ["suite.yaml", "-o", "out.json", "-o", "out.md"],
    "invalid suite": ["invalid.yaml"],
}


def children_cpu() -> float:
    """User and system seconds of every waited-for child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(tree: Path, directory: Path, arguments: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak MB of one `evals run` with source tree `tree`."""
    (directory / ".evals" / "results.db").unlink(missing_ok=True)
    command = [sys.executable, "-m", "evals", "run", *arguments, "--no-progress"]
    before = children_cpu()
    result = measure_command(command, cwd=directory, env={"PYTHONPATH": str(tree)})
    if result.returncode not in (0, 1, 2):
        raise SystemExit(f"evals run exited {result.returncode}:\n{result.output[-3000:]}")
    return result.wall_s, children_cpu() - before, result.peak_rss_mb


def imports_numpy(tree: Path, directory: Path) -> bool:
    """Whether the one-test evaluation imports numpy."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evals", "run", "suite.yaml", "--no-progress"],
        cwd=directory,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
    )
    return any(line.split("|")[-1].strip() == "numpy" for line in done.stderr.splitlines())


def main() -> None:
    """Measure each command (and each tree) alternately; print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measurements", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another evals source tree to compare")
    args = parser.parse_args()
    print("\n".join(machine_description()))
    trees = [HERE, *([args.against.resolve()] if args.against else [])]
    samples: dict[tuple[Path, str], list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="evals-startup-") as tmp:
        directory = Path(tmp)
        (directory / "suite.yaml").write_text(SUITE)
        (directory / "invalid.yaml").write_text(INVALID)
        for _ in range(args.measurements):
            for tree in trees:
                for label, arguments in COMMANDS.items():
                    sample = measure(tree, directory, arguments)
                    samples.setdefault((tree, label), []).append(sample)
        numpy = {tree: imports_numpy(tree, directory) for tree in trees}
    print(f"{'tree':<40} {'command':<20} {'wall s':>7} {'CPU s':>6} {'peak MB':>8}  all walls")
    medians = {}
    for (tree, label), values in samples.items():
        walls = [v[0] for v in values]
        medians[tree, label] = (statistics.median(walls), statistics.median(v[1] for v in values))
        print(
            f"{str(tree)[-40:]:<40} {label:<20} {medians[tree, label][0]:7.2f} "
            f"{medians[tree, label][1]:6.2f} {statistics.median(v[2] for v in values):8.0f}  "
            + " ".join(f"{w:.2f}" for w in walls)
        )
    for tree in trees:
        print(f"{tree}: the one-test evaluation imports numpy: {'yes' if numpy[tree] else 'no'}")
    if args.against:
        other = trees[1]
        for label in COMMANDS:
            wall = medians[other, label][0] / medians[HERE, label][0]
            cpu = medians[other, label][1] / medians[HERE, label][1]
            print(f"{label}: the other tree takes {wall:.2f}x the wall time, {cpu:.2f}x the CPU")


if __name__ == "__main__":
    main()
