"""Staged runs: stop once the gates are decided, keep the false-failure rate within alpha."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.cli import main
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.options import RunOptions
from evals.pipeline.evaluation import analyse
from evals.pipeline.staged import (
    check_stages,
    is_decided,
    look_spends,
    parse_stages,
    run_until_decided,
)
from evals.plan.runs import build_plan
from evals.store import open_store
from evals.suite import load_suite
from validation.beta_binomial import case_rates, numbered_cases, outcome_records, simulated_suite

AGENTS = """
def right(prompt, options, context):
    return {"output": "yes"}


def wrong(prompt, options, context):
    return {"output": "no"}


def alternating(prompt, options, context):
    case = int(context["vars"]["n"])
    return {"output": "yes" if (case + context["repeat"]) % 2 == 0 else "no"}
"""

SUITE = """\
prompts: ['{{{{n}}}}']
providers:
  - {{id: file://agents.py:right, label: right}}
  - {{id: file://agents.py:wrong, label: wrong}}
  - {{id: file://agents.py:alternating, label: alt_a}}
  - {{id: file://agents.py:alternating, label: alt_b}}
gates: {gates}
tests:
{tests}
"""

CASES = 12
STAGES = (2, 4, 8)


def _suite_text(gates: str) -> str:
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n    assert: [{{type: contains, value: 'yes'}}]"
        for n in range(CASES)
    )
    return SUITE.format(gates=gates, tests=tests)


def _identical_suite(write_suite) -> Path:
    return write_suite(
        _suite_text("{baseline: alt_a, candidate: alt_b}"), files={"agents.py": AGENTS}
    )


def test_clearly_worse_candidate_stops_after_the_first_stage(write_suite):
    path = write_suite(
        _suite_text("{baseline: right, candidate: wrong, max_regression: 0.1}"),
        files={"agents.py": AGENTS},
    )
    options = RunOptions(use_store=False, progress=False, agents=["right", "wrong"])
    staged = run_until_decided(load_suite(path), options, STAGES)
    assert [look.repeats for look in staged.looks] == [2]
    assert staged.stopped_early
    assert staged.looks[0].failed == ("regression",)
    assert "regression failed" in staged.stop_reason
    assert len(staged.result.records) == 2 * CASES * 2
    assert staged.result.gates.verdict == "fail"
    assert "1 of 3 stages" in staged.describe()


@pytest.mark.slow
def test_identical_agents_run_every_stage_into_one_stored_evaluation(write_suite, tmp_path):
    path = _identical_suite(write_suite)
    store_url = f"sqlite:///{tmp_path / 'results.db'}"
    options = RunOptions(
        store_url=store_url, progress=False, agents=["alt_a", "alt_b"], trace=False
    )
    staged = run_until_decided(load_suite(path), options, STAGES)
    assert [look.repeats for look in staged.looks] == list(STAGES)
    assert [look.verdict for look in staged.looks] == ["undetermined"] * 3
    assert not staged.stopped_early
    assert "last planned stage" in staged.stop_reason
    keys = [r.key.as_tuple() for r in staged.result.records]
    assert len(keys) == len(set(keys)) == 2 * CASES * STAGES[-1]
    assert [look.spend for look in staged.looks] == pytest.approx([0.0125, 0.0125, 0.025])
    assert staged.result.gates.spend == pytest.approx(0.025)
    assert staged.result.summary.confidence == pytest.approx(0.95)
    store = open_store(store_url)
    try:
        stored = store.list_evaluations()
        assert [e.id for e in stored] == [staged.result.meta.id]
        assert stored[0].status == "complete"
        assert len(store.load_runs(stored[0].id)) == len(keys)
    finally:
        store.close()


def test_staged_run_refuses_fixed_repeats_and_shards(write_suite):
    suite = load_suite(_identical_suite(write_suite))
    with pytest.raises(SuiteError, match="repeats of each stage"):
        run_until_decided(suite, RunOptions(use_store=False, repeat=3), STAGES)
    with pytest.raises(SuiteError, match="shard"):
        run_until_decided(suite, RunOptions(use_store=False, shard=(1, 2)), STAGES)


def test_later_stages_plan_only_new_repeats_in_the_same_shards(write_suite):
    suite = load_suite(_identical_suite(write_suite))
    full = [run.key for run in build_plan(suite, 5)]
    later = [run.key for run in build_plan(suite, 5, repeat_start=2)]
    assert later == [key for key in full if key.repeat >= 2]
    shard = [run.key for run in build_plan(suite, 5, shard=(2, 3))]
    later_shard = [run.key for run in build_plan(suite, 5, shard=(2, 3), repeat_start=2)]
    assert later_shard == [key for key in shard if key.repeat >= 2]


@given(st.lists(st.integers(1, 50), min_size=1, max_size=6, unique=True))
def test_parse_stages_accepts_increasing_repeats_only(values):
    text = ",".join(str(v) for v in values)
    if values == sorted(values):
        assert parse_stages(text) == tuple(values)
    else:
        with pytest.raises(ValueError, match="increasing"):
            parse_stages(text)


def test_parse_stages_rejects_junk():
    for text in ("", "5,x", "0,5"):
        with pytest.raises(ValueError):
            parse_stages(text)
    with pytest.raises(ValueError):
        check_stages([])


@pytest.mark.slow
@given(st.floats(0.5, 0.999), st.lists(st.integers(1, 50), min_size=1, max_size=6, unique=True))
def test_look_spends_add_up_to_the_overall_error_in_proportion_to_repeats(confidence, stages):
    stages = sorted(stages)
    spends = look_spends(confidence, stages)
    assert sum(spends) == pytest.approx(1 - confidence)
    previous = 0
    for stage, spend in zip(stages, spends, strict=True):
        assert spend == pytest.approx((1 - confidence) * (stage - previous) / stages[-1])
        previous = stage


@pytest.mark.slow
def test_identical_noisy_agents_fail_a_staged_build_within_alpha():
    """Two agents with the same per-case pass rates (beta-binomial, mean 0.7, ICC 0.3).

    With the default margin 0 the regression gate can only fail (or, rarely, pass on an
    improvement shown by chance), and a failure is false. Each look spends its share of
    the budget, so failing at any look stays within alpha.
    """
    rng = np.random.default_rng(20240611)
    n_cases, simulations, alpha = 12, 150, 0.05
    suite = simulated_suite(numbered_cases(n_cases))
    config = GateConfig(baseline="base", candidate="cand")
    failed = 0
    spends = look_spends(1 - alpha, STAGES)
    for _ in range(simulations):
        rates = case_rates(rng, n_cases, mu=0.7, icc=0.3)
        records = [
            *outcome_records("base", rng.random((n_cases, STAGES[-1])) < rates[:, None]),
            *outcome_records("cand", rng.random((n_cases, STAGES[-1])) < rates[:, None]),
        ]
        for stage, spend in zip(STAGES, spends, strict=True):
            shown = [r for r in records if r.key.repeat < stage]
            _, report = analyse(suite, shown, config, None, spend=spend)
            if is_decided(report):
                failed += report.verdict == "fail"
                break
    assert failed / simulations <= alpha


def test_cli_runs_stages_and_says_why_it_stopped(write_suite, capsys):
    path = write_suite(
        _suite_text("{baseline: right, candidate: wrong, max_regression: 0.1}"),
        files={"agents.py": AGENTS},
    )
    args = ["run", str(path), "--agent", "right", "--agent", "wrong", "--no-store"]
    assert main([*args, "--no-progress", "--until-decided", "2,4"]) == 1
    out = capsys.readouterr().out
    assert "staged run: 1 of 2 stages (2 repeats: fail, spent 0.025)" in out
    assert "regression failed" in out
    assert main([*args, "--until-decided", "2,4", "--repeat", "3"]) == 2
    assert "repeats of each stage" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main([*args, "--until-decided", "4,2"])
    assert stopped.value.code == 2


@pytest.mark.slow
def test_a_pull_request_stops_once_no_open_gate_can_still_fail(write_suite):
    """Where an undetermined verdict passes, only failing could change the build: identical
    agents stop as soon as no open gate can fail by the last stage, a nightly (which warns)
    runs them all."""
    path = _identical_suite(write_suite)
    options = RunOptions(use_store=False, progress=False, agents=["alt_a", "alt_b"], trace=False)
    suite = load_suite(path)
    pr = run_until_decided(suite, replace(options, environment="pr"), (4, 8, 12))
    assert [look.repeats for look in pr.looks] == [4, 8]
    assert pr.looks[-1].verdict == "undetermined"
    assert "could still fail by the last stage" in pr.stop_reason
    nightly_options = replace(options, environment="nightly")
    nightly = run_until_decided(load_suite(path), nightly_options, (4, 8, 12))
    assert [look.repeats for look in nightly.looks] == [4, 8, 12]
