"""Where the harness's memory grows during a long evaluation that keeps no run.

Runs the workload suite (echo provider, four deterministic assertions per case) in this
process with a SQLite store and no report, and at each checkpoint (a number of runs
counted) prints: the process's RSS; what Python's object allocator holds (pymalloc's
arenas in use and their free blocks, from `sys._debugmallocstats`); what glibc's malloc
holds (in use, and free but not returned: `mallinfo2`); the objects the garbage collector
tracks, by type, against the first checkpoint; and with `--tracemalloc`, the allocations
still live that grew most since the first checkpoint, by line. At the end glibc is asked
to give back its free memory (`malloc_trim`) and the RSS is printed again: what a trim
gives back was free memory the allocator kept, not runs held.

    python benchmarks/memory_growth.py --runs 10000,100000
    MALLOC_ARENA_MAX=1 python benchmarks/memory_growth.py --runs 10000,100000
    python benchmarks/memory_growth.py --runs 10000,40000 --tracemalloc
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import gc
import os
import re
import sys
import tempfile
import tracemalloc
from pathlib import Path

import psutil
from workload import write_suite

from evals.analysis import cells
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


_LIBC = ctypes.CDLL("libc.so.6")
_LIBC.mallinfo2.restype = _MallInfo2


def _mb(count: float) -> str:
    return f"{count / 2**20:7.1f}"


def _pymalloc() -> tuple[int, int]:
    """(bytes in pymalloc's arenas, bytes of their free blocks), from its statistics."""
    read, write = os.pipe()
    saved = os.dup(2)
    os.dup2(write, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()

    def number(label: str) -> int:
        found = re.search(re.escape(label) + r"\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else 0

    return number("# arenas allocated current") * 2**20, number("# bytes in available blocks")


def _by_type() -> collections.Counter[str]:
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


class _Probe:
    """Prints the memory's state at each checkpoint of runs counted."""

    def __init__(self, checkpoints: list[int], traced: bool) -> None:
        self.checkpoints = checkpoints
        self.traced = traced
        self.first_types: collections.Counter[str] | None = None
        self.first_snapshot: tracemalloc.Snapshot | None = None
        self.runs = 0

    def take(self) -> None:
        self.runs += 1
        if self.runs in self.checkpoints:
            self.report(f"after {self.runs:,} runs")

    def report(self, when: str) -> None:
        rss = psutil.Process().memory_info().rss
        arenas, available = _pymalloc()
        info = _LIBC.mallinfo2()
        types = _by_type()
        print(
            f"{when}: RSS {_mb(rss)} MB | pymalloc arenas {_mb(arenas)} MB, free blocks "
            f"{_mb(available)} MB | malloc in use {_mb(info.uordblks + info.hblkhd)} MB, "
            f"free kept {_mb(info.fordblks)} MB | gc objects {sum(types.values()):,}",
            flush=True,
        )
        if self.first_types is None:
            self.first_types = types
        else:
            grown = (types - self.first_types).most_common(8)
            print("  objects grown by type: " + ", ".join(f"{n} +{c:,}" for n, c in grown))
        if not self.traced:
            return
        snapshot = tracemalloc.take_snapshot()
        print(f"  traced now {_mb(tracemalloc.get_traced_memory()[0])} MB")
        if self.first_snapshot is None:
            self.first_snapshot = snapshot
            return
        for stat in snapshot.compare_to(self.first_snapshot, "lineno")[:8]:
            print(f"  {stat}")


def main() -> None:
    """Run the workload once, printing the memory at each checkpoint and after a trim."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="10000,100000", help="checkpoints; the last is the size")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args()
    checkpoints = [int(value) for value in args.runs.split(",")]
    probe = _Probe(checkpoints, args.tracemalloc)
    if args.tracemalloc:
        tracemalloc.start(4)
    print(f"MALLOC_ARENA_MAX={os.environ.get('MALLOC_ARENA_MAX', 'unset')}")
    add = cells.Tally.add

    def counted(tally: cells.Tally, record: object) -> None:
        add(tally, record)  # type: ignore[arg-type]
        probe.take()

    cells.Tally.add = counted  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory(prefix="evals-growth-") as tmp:
        directory = Path(tmp)
        repeat = max(1, checkpoints[-1] // args.cases)
        suite = load_suite(write_suite(directory, args.cases, "echo", 32, repeat))
        store = f"sqlite:///{directory / 'results.db'}"
        options = RunOptions(store_url=store, progress=False, keep_records=False)
        result = run_evaluation(suite, options)
        probe.report("after the analysis")
        del result
        gc.collect()
        probe.report("result freed, gc run")
        _LIBC.malloc_trim(0)
        print(f"after malloc_trim(0): RSS {_mb(psutil.Process().memory_info().rss)} MB")


if __name__ == "__main__":
    main()
