"""A small suite whose candidate loses its one P0 case (6/6 to 0/6) and nothing else: the
P0 gate fails it, and a quarantine of that case is what lets it pass."""

from __future__ import annotations

from pathlib import Path

from evals.cli import main

P0_CASE = "case-1"
AGENTS = """
def steady(prompt, options, context):
    return {"output": "yes"}


def broke_zero(prompt, options, context):
    return {"output": "no" if context["vars"]["n"] == 0 else "yes"}
"""


def write_triage_suite(folder: Path) -> Path:
    """Write the suite and its agents into `folder`; returns the suite file."""
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n"
        f"    metadata: {{priority: {'P0' if n == 0 else 'P1'}}}\n"
        "    assert: [{type: contains, value: 'yes'}]"
        for n in range(6)
    )
    (folder / "agents.py").write_text(AGENTS, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(
        "description: triaged\n"
        "prompts: ['{{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:steady, label: base}\n"
        "  - {id: file://agents.py:broke_zero, label: cand}\n"
        "evaluateOptions: {repeat: 6}\n"
        "gates: {baseline: base, candidate: cand, max_error_rate: null, max_regression: 0.5}\n"
        f"tests:\n{tests}\n",
        encoding="utf-8",
    )
    return path


def run_triage_suite(suite: Path, store: str) -> int:
    """`evals run` of the suite in the pr environment; returns the exit code."""
    return main(["run", str(suite), "--store", store, "--no-progress", "--env", "pr"])


def stored_suite_id(store: str) -> str:
    """The suite id of the newest evaluation in the store."""
    from evals.store import open_store

    opened = open_store(store)
    try:
        return opened.list_evaluations(limit=1)[0].suite_id
    finally:
        opened.close()
