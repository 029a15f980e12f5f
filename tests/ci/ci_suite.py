"""A small two-agent suite whose outcomes depend only on the run's seed.

`SLOW_MS` in the environment makes every call sleep, so a process can be killed while
runs are in flight. `CALLS_FILE` counts the calls that reached the agent.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

AGENT = """
import os, time

def _count():
    path = os.environ.get("CALLS_FILE")
    if path:
        with open(path, "a") as handle:
            handle.write("x\\n")

def _answer(seed, bias):
    return "yes" if seed % 10 < bias else "no"

def baseline(prompt, options, context):
    _count()
    time.sleep(float(os.environ.get("SLOW_MS", "0")) / 1000)
    return {"output": _answer(context["seed"], 7) + " " + prompt, "cost": 0.001}

def candidate(prompt, options, context):
    _count()
    time.sleep(float(os.environ.get("SLOW_MS", "0")) / 1000)
    return {"output": _answer(context["seed"], 5) + " " + prompt, "cost": 0.0012}
"""

SUITE = """
description: seeded agents
prompts: ["{{question}}"]
providers:
  - {id: "file://agent.py:baseline", label: baseline}
  - {id: "file://agent.py:candidate", label: candidate}
evaluateOptions: {repeat: 4, maxConcurrency: 4}
gates:
  baseline: baseline
  candidate: candidate
  min_pass_rate: 0.3
defaultTest:
  assert:
    - {type: icontains, value: "yes"}
tests:
"""


def write_ci_suite(directory: Path, cases: int = 6) -> Path:
    """Write the suite (with `cases` cases) and its agent into `directory`; return the YAML."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.py").write_text(AGENT, encoding="utf-8")
    tests = "".join(
        f"  - description: case {i}\n    vars: {{question: 'q{i}'}}\n" for i in range(cases)
    )
    path = directory / "suite.yaml"
    path.write_text(SUITE + tests, encoding="utf-8")
    return path


def stored_runs(db: Path, evaluation_id: str) -> int:
    """How many runs of `evaluation_id` the SQLite store `db` holds (0 before it exists)."""
    if not db.exists():
        return 0
    with sqlite3.connect(db, timeout=30) as connection:
        try:
            row = connection.execute(
                "SELECT count(*) FROM runs WHERE evaluation_id = ?", (evaluation_id,)
            ).fetchone()
        except sqlite3.OperationalError:  # schema not created yet
            return 0
    return int(row[0])
