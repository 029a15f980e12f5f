"""A P0 case that breaks fails the build on a second `evals run` too, when the stored
baseline stands in for the baseline agent: its baseline runs are re-run fresh, so the P0
gate compares fresh runs on both sides and keeps its whole share of the budget."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evals.cli import main
from evals.gates import baseline as guard

AGENTS = """
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def _log(name):
    with open(HERE / "calls.log", "a") as log:
        log.write(name + "\\n")


def stable_bot(prompt, options, context):
    _log("stable")
    return {"output": "refund approved"}


def new_bot(prompt, options, context):
    _log("new")
    if context["vars"]["topic"] == "refunds":
        return {"output": "I cannot help with that"}
    return {"output": "refund approved"}
"""

TOPICS = ["refunds", *(f"topic-{n}" for n in range(1, 20))]
P0 = set(TOPICS[:10])
REPEATS = 5


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A user's project: their own agents file and a 20-case suite with 10 P0 cases, one
    of which (`refunds`) the new agent always fails and the stable one always passes."""
    (tmp_path / "shop_agents.py").write_text(AGENTS)
    tests = "\n".join(
        f"  - description: {topic}\n"
        f"    vars: {{topic: {topic}}}\n"
        f"    metadata: {{priority: {'P0' if topic in P0 else 'P2'}}}\n"
        "    assert: [{type: icontains, value: approved}]"
        for topic in TOPICS
    )
    suite = tmp_path / "shop.yaml"
    suite.write_text(
        "prompts: ['Answer the customer about {{topic}}']\n"
        "providers:\n"
        "  - {id: file://shop_agents.py:stable_bot, label: stable}\n"
        "  - {id: file://shop_agents.py:new_bot, label: new}\n"
        f"evaluateOptions: {{repeat: {REPEATS}}}\n"
        "gates: {baseline: stable, candidate: new}\n"
        f"tests:\n{tests}\n"
    )
    return suite


def _run(suite: Path) -> tuple[int, Counter[str], dict[str, Any], str]:
    """`evals run` as the user types it, its output written to a file: (exit code, agent
    calls, the JSON report, the terminal output)."""
    folder = suite.parent
    (folder / "calls.log").write_text("")
    report, out = folder / "report.json", folder / "out.txt"
    args = ["run", str(suite), "--store", str(folder / "results.db"), "--env", "pr"]
    with out.open("w") as sink, contextlib.redirect_stdout(sink):
        code = main([*args, "--no-progress", "-o", str(report)])
    calls = Counter((folder / "calls.log").read_text().split())
    return code, calls, json.loads(report.read_text())["evals"], " ".join(out.read_text().split())


def _p0(report: dict[str, Any]) -> dict[str, Any]:
    return next(g for g in report["gates"]["gates"] if g["name"] == "p0_regressions")


@pytest.mark.slow
def test_a_broken_p0_case_fails_again_when_the_stored_baseline_stands_in(shop: Path) -> None:
    code, calls, first, _ = _run(shop)
    assert calls == {"stable": len(TOPICS) * REPEATS, "new": len(TOPICS) * REPEATS}
    assert first["gates"]["reuse"] is None
    assert code != 0 and _p0(first)["status"] == "fail"

    code, calls, second, out = _run(shop)
    reuse = second["gates"]["reuse"]
    assert reuse is not None and not reuse["fell_back"]
    # the P0 gate decides on fresh runs with its whole share, and fails as on the first run
    p0 = _p0(second)
    assert p0["status"] == "fail" and code != 0
    assert p0["share"] == pytest.approx(_p0(first)["share"])
    assert "baseline stable:" in out and "stored run(s) reused" in out
    assert "(P0 cases in full)" in out
    # the P0 cases' baseline runs all ran fresh, the other cases' by the guard's rule
    others = {topic: (REPEATS, REPEATS) for topic in TOPICS if topic not in P0}
    guarded = len(P0) * REPEATS + sum(len(r) for r in guard.guard_repeats(others).values())
    assert calls == {"stable": guarded, "new": len(TOPICS) * REPEATS}
    assert reuse["guard"] == guarded
    assert reuse["reused"] == len(TOPICS) * REPEATS - reuse["guard"]
    # the gates reading stored runs keep the reserve
    kept = [g for g in second["gates"]["gates"] if g["share"] and g["name"] != "p0_regressions"]
    assert kept
    before = {g["name"]: g["share"] for g in first["gates"]["gates"]}
    for row in kept:
        assert row["share"] == pytest.approx(before[row["name"]] * (1 - reuse["reserve"]))
