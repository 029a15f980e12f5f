"""The benchmark workload shared by the overhead, comparison and scaling benchmarks.

One promptfoo-compatible suite: N tests, one prompt `{{text}}`, and four deterministic
assertions per test (equals, contains, starts-with, regex) that an echoing agent passes.
The agent is either promptfoo's built-in `echo` provider or a Python file provider that
returns the prompt, in a sync and an async variant. The Python agent adds the time spent
inside its own function to a file when the process exits, so a benchmark can subtract
the agent's own time from the process's wall time and keep only the harness's overhead.

Also here: running a command while sampling the peak resident memory of its whole
process tree, which is how every benchmark reports memory.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import yaml

AGENT_SOURCE = '''"""Echo agent for benchmarks: returns the prompt and counts its own time."""

import atexit
import os
import time

_own_seconds = 0.0


def _record_time():
    path = os.environ.get("EVALS_BENCH_AGENT_TIME")
    if path:
        with open(path, "a") as handle:
            handle.write(f"{_own_seconds!r}\\n")


atexit.register(_record_time)


def call_api(prompt, options, context):
    global _own_seconds
    started = time.perf_counter()
    answer = {"output": prompt}
    _own_seconds += time.perf_counter() - started
    return answer


async def call_api_async(prompt, options, context):
    global _own_seconds
    started = time.perf_counter()
    answer = {"output": prompt}
    _own_seconds += time.perf_counter() - started
    return answer


async def call_api_slow(prompt, options, context):
    """An agent that waits 50 ms for its model, as a remote call would."""
    import asyncio

    await asyncio.sleep(0.05)
    return {"output": prompt}
'''

PROVIDERS = {
    "echo": "echo",
    "python-sync": "file://agent.py:call_api",
    "python-async": "file://agent.py:call_api_async",
    "python-50ms": "file://agent.py:call_api_slow",
}


def test_entries(count: int) -> list[dict]:
    """`count` promptfoo tests with four deterministic assertions each."""
    return [
        {
            "description": f"item {index}",
            "vars": {"text": f"item {index}"},
            "assert": [
                {"type": "equals", "value": f"item {index}"},
                {"type": "contains", "value": str(index)},
                {"type": "starts-with", "value": "item"},
                {"type": "regex", "value": r"^item \d+$"},
            ],
        }
        for index in range(count)
    ]


def write_suite(
    directory: Path, cases: int, provider: str, concurrency: int = 32, repeat: int = 5
) -> Path:
    """Write the workload suite and its agent file into `directory`; returns the YAML path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.py").write_text(AGENT_SOURCE)
    config = {
        "description": f"benchmark workload ({provider})",
        "prompts": ["{{text}}"],
        "providers": [{"id": PROVIDERS[provider], "label": "agent"}],
        "evaluateOptions": {"repeat": repeat, "maxConcurrency": concurrency},
        "tests": test_entries(cases),
    }
    path = directory / f"suite-{provider}-{cases}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def read_agent_seconds(path: Path) -> float:
    """Total time the Python agent spent in its own function, summed over processes."""
    if not path.exists():
        return 0.0
    return sum(float(line) for line in path.read_text().split())


@dataclass(frozen=True)
class Measurement:
    """Wall time, peak resident memory of the process tree, and the exit code."""

    wall_s: float
    peak_rss_mb: float
    returncode: int
    output: str


def _tree_rss(process: psutil.Process) -> int:
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def measure_command(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout_s: float = 600.0,
    poll_s: float = 0.02,
    sample_memory: bool = True,
) -> Measurement:
    """Run `command`, sampling the summed RSS of it and its descendants every `poll_s`
    (with `sample_memory=False`, not at all, and the peak is 0: the sampler's walk of the
    process tree, about 1 ms of CPU per sample, would take time from the command timed)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    watched = psutil.Process(process.pid)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            try:
                peak = max(peak, _tree_rss(watched))
            except psutil.NoSuchProcess:
                return
            stop.wait(poll_s)

    sampler = threading.Thread(target=sample, daemon=True)
    if sample_memory:
        sampler.start()
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        for child in watched.children(recursive=True):
            child.kill()
        process.kill()
        output, _ = process.communicate()
        output = f"timed out after {timeout_s:g} s\n{output}"
    wall = time.perf_counter() - started
    stop.set()
    if sample_memory:
        sampler.join()
    return Measurement(wall, peak / 2**20, process.returncode, output)


def median_measurement(measurements: list[Measurement]) -> Measurement:
    """The median wall time and median peak memory of repeated measurements."""
    return Measurement(
        statistics.median(m.wall_s for m in measurements),
        statistics.median(m.peak_rss_mb for m in measurements),
        max(m.returncode for m in measurements),
        measurements[-1].output,
    )


def machine_description() -> list[str]:
    """CPU count and model, memory, load, Python and Node versions of this machine."""
    model = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    load = os.getloadavg()
    return [
        f"CPUs: {os.cpu_count()} x {model}",
        f"RAM: {psutil.virtual_memory().total / 2**30:.1f} GiB",
        f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        f"Python {'.'.join(map(str, sys.version_info[:3]))}, "
        f"Node {node.stdout.strip() or 'not found'}",
    ]
