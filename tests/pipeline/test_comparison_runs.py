"""`evals run` with max-score and select-best: verdicts, reports, regrade, and exact resume."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from evals.cli import main
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.pipeline.regrade import regrade
from evals.store import open_store
from evals.suite import load_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graders"))
from judge_server import base_url, judge_server

AGENT = """
import os
import signal


async def call_api(prompt, options, context):
    calls = os.environ.get("CALLS_FILE")
    if calls:
        with open(calls, "a") as log:
            log.write(prompt + "\\n")
        with open(calls) as log:
            if os.environ.get("CRASH_AT") == str(len(log.readlines())):
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C of the harness
    return {"output": prompt.upper()}
"""

SUITE = """
description: comparisons
prompts: ['{{dish}} plain', '{{dish}} with spicy sauce']
providers:
  - echo
  - id: file://agent.py
    label: loud
defaultTest:
  options:
    provider: {id: openai:chat:judge, config: {apiBaseUrl: "JUDGE"}}
evaluateOptions: {repeat: 2, maxConcurrency: 1}
tests:
  - vars: {dish: tea}
    assert: [{type: icontains, value: tea}]
  - vars: {dish: rice}
    assert:
      - {type: contains, value: spicy}
      - {type: icontains, value: rice}
      - {type: max-score}
  - vars: {dish: soup}
    assert:
      - {type: icontains, value: soup}
      - {type: select-best, value: loud SPICY}
"""


@pytest.fixture
def suite_path(tmp_path: Path):
    with judge_server() as server:
        (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
        path = tmp_path / "suite.yaml"
        path.write_text(SUITE.replace("JUDGE", base_url(server)), encoding="utf-8")
        yield path


def _verdicts(records) -> list[tuple]:
    return sorted(
        (
            r.key.as_tuple(),
            r.status,
            round(r.grade.score, 6),
            tuple((c.assertion["type"], c.passed, c.reason) for c in r.grade.component_results),
        )
        for r in records
    )


@pytest.mark.slow
def test_run_decides_each_group_and_reports_its_components(suite_path: Path, tmp_path: Path):
    db, report = tmp_path / "r.db", tmp_path / "out.json"
    args = ["run", str(suite_path), "--store", str(db), "--evaluation-id", "e1", "-o", str(report)]
    main([*args, "--quiet", "--no-progress"])
    rows = json.loads(report.read_text(encoding="utf-8"))["results"]["results"]
    by_dish: dict[str, list[dict]] = {}
    for row in rows:
        by_dish.setdefault(row["vars"]["dish"], []).append(row)
    winners = Counter(
        (row["vars"]["dish"], row["response"]["output"]) for row in rows if row["success"]
    )
    # max-score: only "rice with spicy sauce" has both words with that case (score 1.0).
    assert winners[("rice", "rice with spicy sauce")] == 2
    assert winners[("soup", "SOUP WITH SPICY SAUCE")] == 2
    assert sum(n for (dish, _), n in winners.items() if dish != "tea") == 4
    loser = next(r for r in by_dish["rice"] if r["response"]["output"] == "RICE PLAIN")
    component = loser["gradingResult"]["componentResults"][-1]
    assert component["reason"] == "Not selected (score: 0.500, max: 1.000)"
    assert component["assertion"]["type"] == "max-score"
    assert component["namedScores"]["maxScore"] == 0.5
    assert loser["error"] == 'Expected output to contain "spicy"' and loser["score"] == 0
    store = open_store(f"sqlite:///{db}")
    try:
        stored = store.load_runs("e1")
    finally:
        store.close()
    assert len(stored) == 3 * 4 * 2
    assert sum(r.passed for r in stored) == 8 + 4


@pytest.mark.slow
def test_killed_run_resumes_to_the_uninterrupted_verdicts(
    suite_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    suite = load_suite(suite_path)
    whole = run_evaluation(
        suite, RunOptions(store_url=f"sqlite:///{tmp_path / 'a.db'}", progress=False)
    )
    url = f"sqlite:///{tmp_path / 'b.db'}"
    # The loud agent's 6th call, which interrupts the harness, is the last run of the first
    # soup group (plan order).
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    monkeypatch.setenv("CRASH_AT", "6")
    options = RunOptions(store_url=url, progress=False, evaluation_id="k")
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(load_suite(suite_path), options)
    store = open_store(url)
    try:
        partial = store.load_runs("k")
    finally:
        store.close()
    per_group = Counter((r.key.case_id, r.key.repeat) for r in partial)
    comparison_cases = {c.id for c in suite.cases if c.vars["dish"] != "tea"}
    assert all(n == 4 for (case, _), n in per_group.items() if case in comparison_cases)
    assert len(partial) < 24
    monkeypatch.delenv("CRASH_AT")
    resumed = run_evaluation(
        load_suite(suite_path), RunOptions(store_url=url, progress=False, resume="k")
    )
    store = open_store(url)
    try:
        final = store.load_runs("k")
    finally:
        store.close()
    assert len(final) == len({r.key.as_tuple() for r in final}) == 24
    assert _verdicts(final) == _verdicts(resumed.records) == _verdicts(whole.records)
    regraded = regrade(url, "k")
    assert regraded.records == [] and regraded.runs is not None
    assert _verdicts(list(regraded.runs.iter_runs())) == _verdicts(whole.records)
    assert regraded.summary.to_dict()["agents"] == resumed.summary.to_dict()["agents"]


def test_sharding_a_suite_with_comparisons_is_refused(suite_path: Path):
    from evals.model.errors import SuiteError

    with pytest.raises(SuiteError, match="--shard"):
        run_evaluation(load_suite(suite_path), RunOptions(use_store=False, shard=(1, 2)))
