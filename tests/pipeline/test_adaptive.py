"""Adaptive runs: looks after every batch, only cases of undetermined gates run on,
decisions kept, budgets respected, the look of each run stored, resumable."""

from __future__ import annotations

import sqlite3
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from evals.cli import main
from evals.gates.adaptive import AdaptiveState, Futility, advance, settle
from evals.gates.catalog import gate_cases
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.options import RunOptions
from evals.model.summary import AdaptiveSummary, GateReport, GateResult
from evals.pipeline.adaptive import AdaptiveDesign, design_for, run_adaptive
from evals.reports.view import gate_settings
from evals.stats import crossing_probabilities, spending_shares
from evals.store import open_store
from evals.suite import load_suite
from validation.beta_binomial import tagged_cases

CASES = tagged_cases(12, tags=3, p0=(0, 4))
GATE_NAMES = ["regression", "regression[t0]", "regression[t1]", "p0_regressions", "policy"]
STATUSES = st.sampled_from(["pass", "fail", "undetermined"])


def _report(statuses: dict[str, str]) -> GateReport:
    return GateReport(
        gates=[GateResult(name, status, 0.0, 0.0, None, "why") for name, status in statuses.items()]
    )


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    first=st.integers(1, 10),
    every=st.integers(1, 5),
    extra=st.integers(0, 20),
    rho=st.floats(0.5, 4),
    split=st.integers(2, 12),
)
def test_design_looks_end_at_the_last_repeat_and_spend_exactly_the_budget(
    first: int, every: int, extra: int, rho: float, split: int
) -> None:
    design = AdaptiveDesign(last=first + extra, first=first, every=every, rho=rho)
    looks = design.looks()
    assert looks[0] == first and looks[-1] == first + extra
    assert all(b > a for a, b in pairwise(looks))
    assert all(b - a <= every for a, b in pairwise(looks))
    fractions = [k / looks[-1] for k in looks]
    spends = design.spends(0.95, split)
    assert len(spends) == len(looks) and min(spends) > 0
    # The finest test's levels cross with exactly its share of alpha over the looks,
    # and every look's budget is at least the union bound's.
    boundaries = [float(norm.isf(spend / split)) for spend in spends]
    assert sum(crossing_probabilities(fractions, boundaries)) == pytest.approx(0.05 / split)
    union = spending_shares(fractions, 0.05, rho=rho)
    assert all(s >= u * (1 - 1e-6) for s, u in zip(spends, union, strict=True))
    assert spends[0] == pytest.approx(union[0])


def test_design_refuses_impossible_schedules_and_caps() -> None:
    with pytest.raises(ValueError, match="first look"):
        AdaptiveDesign(last=4, first=5)
    with pytest.raises(ValueError, match="budget-runs"):
        AdaptiveDesign(budget_runs=0)
    with pytest.raises(ValueError, match="budget-cost"):
        AdaptiveDesign(budget_cost=0.0)
    with pytest.raises(ValueError, match="pass side"):
        AdaptiveDesign(pass_futility=-1.0)


def test_each_gate_reads_its_own_cases() -> None:
    every = {c.id for c in CASES}
    assert gate_cases("regression", CASES) == every
    assert gate_cases("error_rate", CASES) == every
    assert gate_cases("regression[t1]", CASES) == {c.id for c in CASES if "t1" in c.tags}
    assert gate_cases("min_pass_rate[t2]", CASES) == {"c2", "c5", "c8", "c11"}
    assert gate_cases("p0_regressions", CASES) == {"c0", "c4"}
    assert gate_cases("judge_kappa", CASES) == frozenset()
    assert gate_cases("policy", CASES) == frozenset()


@given(st.fixed_dictionaries({name: STATUSES for name in GATE_NAMES}), STATUSES)
def test_open_cases_are_those_of_undetermined_gates_and_decisions_are_kept(
    statuses: dict[str, str], later: str
) -> None:
    first = settle(_report(statuses), {}, 1, 2, 48)
    state = advance(AdaptiveState(), first, CASES, 1)
    statistical = [n for n in GATE_NAMES if n != "policy"]
    undetermined = [n for n in statistical if statuses[n] == "undetermined"]
    expected = set().union(*(gate_cases(n, CASES) for n in undetermined))
    assert state.active == expected
    assert set(state.decided) == {n for n in statistical if statuses[n] != "undetermined"}
    for decided in state.decided.values():
        assert decided.look == 1
        assert decided.result.reason.endswith("decided at look 1 (2 repeats, 48 runs)")
    # A later look whose data say otherwise keeps every earlier decision.
    second = settle(_report(dict.fromkeys(GATE_NAMES, later)), state.frozen(), 2, 4, 80)
    for gate in second.gates:
        if gate.name in state.decided:
            assert gate == state.decided[gate.name].result
        elif gate.name != "policy" and later != "undetermined":
            assert gate.reason.endswith("decided at look 2 (4 repeats, 80 runs)")
        else:
            assert gate.reason == "why"
    assert advance(state, second, CASES, 2).decided.keys() >= state.decided.keys()


AGENTS = """
def right(prompt, options, context):
    return {"output": "yes", "cost": 0.01}


def half(prompt, options, context):
    case = int(context["vars"]["n"])
    if context["vars"]["tag"] == "steady":
        return {"output": "yes", "cost": 0.01}
    return {"output": "yes" if (case + context["repeat"]) % 2 == 0 else "no", "cost": 0.01}
"""

SUITE = """\
prompts: ['{{{{n}}}}']
providers:
  - {{id: file://agents.py:right, label: base}}
  - {{id: file://agents.py:half, label: cand}}
gates:
  baseline: base
  candidate: cand
  max_regression: 0.6
  max_error_rate: null
  per_tag: {{steady: {{max_regression: 0.3}}, shaky: {{max_regression: 0.5}}}}
tests:
{tests}
"""
STEADY, SHAKY = range(0, 8), range(8, 12)


def _write(write_suite) -> Path:
    tests = "\n".join(
        f"  - vars: {{n: {n}, tag: {tag}}}\n    metadata: {{tags: [{tag}]}}\n"
        "    assert: [{type: contains, value: 'yes'}]"
        for n, tag in [(n, "steady") for n in STEADY] + [(n, "shaky") for n in SHAKY]
    )
    return write_suite(SUITE.format(tests=tests), files={"agents.py": AGENTS})


DESIGN = AdaptiveDesign(last=12, first=2, every=2, futility=None)


def _stored_looks(store_url: str, evaluation_id: str) -> dict[tuple, int]:
    store = open_store(store_url)
    try:
        return {r.key.as_tuple(): r.metadata["look"] for r in store.load_runs(evaluation_id)}
    finally:
        store.close()


@pytest.mark.slow
def test_decided_cases_stop_while_the_undetermined_tag_runs_on(write_suite, tmp_path):
    """The steady tag (no loss) and the suite are decided early; the shaky tag, whose loss
    sits exactly at its tolerance, stays open and alone gets the later looks."""
    store_url = f"sqlite:///{tmp_path / 'results.db'}"
    options = RunOptions(store_url=store_url, progress=False, trace=False)
    suite = load_suite(_write(write_suite))
    number = {case.id: int(case.vars["n"]) for case in suite.cases}
    adaptive = run_adaptive(suite, options, DESIGN)
    decided = adaptive.state.decided
    assert decided["regression[steady]"].result.status == "pass"
    steady_look = decided["regression[steady]"].look
    assert steady_look < len(adaptive.looks)
    assert "regression[shaky]" not in decided
    looks = _stored_looks(store_url, adaptive.result.meta.id)
    assert set(looks.values()) == {look.look for look in adaptive.looks}
    repeats = {n: 1 + max(k[3] for k in looks if number[k[1]] == n) for n in [*STEADY, *SHAKY]}
    assert all(repeats[n] == DESIGN.looks()[-1] for n in SHAKY)
    # Once every gate reading a steady case was decided, it got no further run.
    last_open = max(decided[g].look for g in ("regression", "regression[steady]"))
    assert all(repeats[n] == DESIGN.looks()[last_open - 1] for n in STEADY)
    assert all(look <= last_open for key, look in looks.items() if number[key[1]] in STEADY)
    assert adaptive.runs == len(looks) < adaptive.fixed_runs == 2 * 12 * 12
    assert adaptive.saved == adaptive.fixed_runs - len(looks)
    gate = next(g for g in adaptive.result.gates.gates if g.name == "regression[steady]")
    assert f"decided at look {steady_look}" in gate.reason
    assert "saved" in adaptive.describe()
    # The evaluation stores what the run did with its gates; the reports show it.
    store = open_store(store_url)
    try:
        (stored,) = store.list_evaluations()
    finally:
        store.close()
    assert stored.gates is not None
    summary = AdaptiveSummary.from_dict(stored.gates["adaptive"])
    assert summary == adaptive.summary() == adaptive.result.gates.adaptive
    assert summary.runs == len(looks) and summary.saved == adaptive.saved
    steady = next(g for g in summary.decided if g.name == "regression[steady]")
    assert (steady.look, steady.status) == (steady_look, "pass")
    assert steady.runs == adaptive.looks[steady_look - 1].runs
    assert ("adaptive run", adaptive.describe()) in gate_settings(adaptive.result)


def test_a_gate_that_cannot_be_decided_stops_its_cases(write_suite):
    """The shaky tag's loss sits exactly at its tolerance: no number of repeats up to the
    last look can pass or fail it, so futility stops its cases and the run ends early."""
    suite = load_suite(_write(write_suite))
    options = RunOptions(use_store=False, progress=False)
    without = run_adaptive(suite, options, DESIGN)
    design = AdaptiveDesign(last=12, first=2, every=2)
    adaptive = run_adaptive(suite, RunOptions(use_store=False, progress=False), design)
    shaky = adaptive.state.decided["regression[shaky]"]
    assert shaky.result.status == "undetermined"
    assert "cannot be decided by the last look" in shaky.result.reason
    assert "can still be decided" in adaptive.stop_reason
    assert adaptive.runs < without.runs
    assert adaptive.result.gates.verdict == without.result.gates.verdict == "undetermined"
    final = {g.name: g for g in adaptive.result.gates.gates}
    assert final["regression[shaky]"] == shaky.result


def test_a_smaller_pass_reach_never_runs_more_nor_decides_otherwise(write_suite):
    """Giving up passes sooner only stops more gates: the open gates are a subset at
    every look, each seeing the same runs, so the runs can only fall and every gate the
    eager run decided got the same decision in the default run."""
    suite = load_suite(_write(write_suite))
    options = RunOptions(use_store=False, progress=False)
    default = run_adaptive(suite, options, AdaptiveDesign(last=12, first=2, every=2))
    eager = run_adaptive(
        suite, options, AdaptiveDesign(last=12, first=2, every=2, pass_futility=0.0)
    )
    # On this suite it saves runs: the shaky tag's pass is given up at an earlier look.
    assert eager.runs < default.runs
    final = {g.name: g.status for g in default.result.gates.gates}
    for name, decided in eager.state.decided.items():
        if decided.result.status != "undetermined":
            assert final[name] == decided.result.status


@pytest.mark.slow
def test_a_resumed_adaptive_run_ends_with_the_uninterrupted_runs(write_suite, tmp_path):
    suite = load_suite(_write(write_suite))
    whole_url = f"sqlite:///{tmp_path / 'whole.db'}"
    whole = run_adaptive(suite, RunOptions(store_url=whole_url, progress=False), DESIGN)
    cut_url = f"sqlite:///{tmp_path / 'cut.db'}"
    first = run_adaptive(suite, RunOptions(store_url=cut_url, progress=False), DESIGN)
    evaluation = first.result.meta.id
    shaky = next(case.id for case in suite.cases if case.vars["n"] == 9)
    # A crash in the third look: its runs and every later one are lost, but for a few.
    with sqlite3.connect(tmp_path / "cut.db") as connection:
        lost = [
            row[0]
            for row in connection.execute(
                "SELECT id FROM runs WHERE repeat >= 4 AND NOT (repeat = 4 AND case_id = ?)",
                (shaky,),
            )
        ]
        marks = ",".join("?" * len(lost))
        connection.execute(f"DELETE FROM grades WHERE run_id IN ({marks})", lost)
        connection.execute(f"DELETE FROM runs WHERE id IN ({marks})", lost)
    assert len(_stored_looks(cut_url, evaluation)) < whole.runs
    resumed = run_adaptive(
        suite, RunOptions(store_url=cut_url, progress=False, resume=evaluation), DESIGN
    )
    assert resumed.result.meta.id == evaluation
    assert _stored_looks(cut_url, evaluation) == _stored_looks(whole_url, whole.result.meta.id)
    assert [look.cases for look in resumed.looks] == [look.cases for look in whole.looks]
    assert resumed.result.gates.verdict == whole.result.gates.verdict


def test_the_run_budget_is_never_exceeded(write_suite, tmp_path):
    suite = load_suite(_write(write_suite))
    design = AdaptiveDesign(last=12, first=2, every=2, budget_runs=100)
    adaptive = run_adaptive(suite, RunOptions(use_store=False, progress=False), design)
    assert adaptive.runs <= 100
    assert "--budget-runs 100" in adaptive.stop_reason
    cost = AdaptiveDesign(last=12, first=2, every=2, budget_cost=1.0)
    priced = run_adaptive(suite, RunOptions(use_store=False, progress=False), cost)
    assert sum(r.cost for r in priced.result.records) <= 1.0
    assert "--budget-cost" in priced.stop_reason
    with pytest.raises(SuiteError, match="first look"):
        run_adaptive(
            suite,
            RunOptions(use_store=False, progress=False),
            AdaptiveDesign(last=12, first=2, every=2, budget_runs=10),
        )


def test_adaptive_run_refuses_fixed_repeats_and_shards_without_a_shared_store(write_suite):
    suite = load_suite(_write(write_suite))
    with pytest.raises(SuiteError, match="repeats of each look"):
        run_adaptive(suite, RunOptions(use_store=False, repeat=3), DESIGN)
    with pytest.raises(SuiteError, match="one shared store under one evaluation id"):
        run_adaptive(suite, RunOptions(use_store=False, shard=(1, 2)), DESIGN)
    with pytest.raises(SuiteError, match="one shared store under one evaluation id"):
        run_adaptive(suite, RunOptions(shard=(1, 2)), DESIGN)
    with pytest.raises(SuiteError, match="resumes by itself"):
        run_adaptive(suite, RunOptions(shard=(1, 2), evaluation_id="a", resume="a"), DESIGN)
    with pytest.raises(SuiteError, match="longer than the 64 characters"):
        run_adaptive(suite, RunOptions(shard=(1, 2), evaluation_id="x" * 60), DESIGN)


DEMO = Path(__file__).resolve().parents[2] / "cases" / "trading-research"


@pytest.mark.slow
def test_demo_suite_reaches_the_fixed_verdict_with_fewer_runs(tmp_path, capsys):
    fixed_url = f"sqlite:///{tmp_path / 'fixed.db'}"
    adaptive_url = f"sqlite:///{tmp_path / 'adaptive.db'}"
    fixed_code = main(["run", str(DEMO), "--repeat", "10", "--store", fixed_url, "-q"])
    adaptive_code = main(["run", str(DEMO), "--adaptive", "10", "--store", adaptive_url])
    out = capsys.readouterr().out
    assert adaptive_code == fixed_code == 1
    stores = [open_store(url) for url in (fixed_url, adaptive_url)]
    try:
        (fixed,), (adaptive,) = (s.list_evaluations() for s in stores)
        fixed_runs, adaptive_runs = (
            s.load_runs(e.id) for s, e in zip(stores, (fixed, adaptive), strict=True)
        )
        assert fixed.gates is not None and adaptive.gates is not None
        assert adaptive.gates["verdict"] == fixed.gates["verdict"] == "fail"
        assert adaptive.gates["adaptive"]["runs"] == len(adaptive_runs)
        assert "adaptive" not in fixed.gates or fixed.gates["adaptive"] is None
    finally:
        for store in stores:
            store.close()
    assert len(adaptive_runs) < len(fixed_runs) == 2 * 29 * 10
    assert all("look" in r.metadata for r in adaptive_runs)
    assert f"{len(adaptive_runs)} runs against {len(fixed_runs)}" in out


def test_budgets_per_environment_are_checked_when_the_suite_loads(write_suite):
    good = SUITE.replace(
        "  max_error_rate: null\n", "  environments: {{pr: {{budget_runs: 100}}}}\n"
    )
    tests = "  - vars: {n: 1, tag: steady}\n    assert: [{type: contains, value: 'yes'}]"
    suite = load_suite(write_suite(good.format(tests=tests), files={"agents.py": AGENTS}))
    assert suite.gates.for_environment("pr").budget_runs == 100
    assert suite.gates.for_environment(None).budget_runs is None
    for bad, message in (
        ("budget_runs: 0", "budget_runs must be a whole number"),
        ("budget_cost: -1", "budget_cost must be a positive number"),
    ):
        text = SUITE.replace("  max_error_rate: null\n", f"  {bad}\n").format(tests=tests)
        with pytest.raises(SuiteError, match=message):
            load_suite(write_suite(text, files={"agents.py": AGENTS}))


def test_adaptive_and_staged_looks_cannot_be_combined(write_suite, capsys):
    path = _write(write_suite)
    code = main(["run", str(path), "--adaptive", "--until-decided", "--no-store", "-q"])
    assert code == 2
    assert "two designs of looks" in capsys.readouterr().err


def test_the_command_line_caps_an_adaptive_run(write_suite, capsys):
    path = _write(write_suite)
    command = ["run", str(path), "--adaptive", "12", "--look-every", "4", "--no-store"]
    assert main([*command, "--budget-runs", "100"]) == 0
    out = capsys.readouterr().out
    assert "look 1 (4 repeats, 12 cases, 96 runs)" in out
    assert "past --budget-runs 100" in out
    assert main([*command, "--budget-runs", "50"]) == 2
    assert "first look alone needs more runs" in capsys.readouterr().err
    assert main([*command, "--pass-reach", "-1"]) == 2
    assert "pass side's futility reach must be at least 0" in capsys.readouterr().err


def test_a_tag_row_is_judged_futile_at_its_first_step():
    """A row that could fail by the last look only at a later Holm step (after another row
    of its family failed, which turns the build red without it) cannot be the one to fail
    the build: it is judged at its gate's share over its family."""
    futility = Futility(
        fraction=0.5, spend_ratio=2.0, final_spend=0.05, pass_reach=0.0, fail_only=True
    )
    error, share, level = 0.05, 0.0125, 1 - 0.0125

    def row(family: int | None) -> GateResult:
        measured = -0.105  # just beyond the tolerated loss of 0.1
        return GateResult(
            "regression[t0]",
            "undetermined",
            -0.1,
            measured,
            None,
            "",
            fail_limit=measured + float(norm.ppf(level)) * error,
            fail_level=level,
            pass_limit=measured - float(norm.ppf(level)) * error,
            pass_level=level,
            share=share,
            family=family,
        )

    assert not futility.judge(row(None))  # alone at its share it could still fail
    assert futility.judge(row(4))  # first of four tags: a quarter of it, out of reach


def test_a_pull_requests_adaptive_design_judges_the_fail_side_alone():
    pr = GateConfig(on_undetermined="pass")
    assert design_for(pr, 10).fail_only
    # --pass-reach asks for the pass side to be judged too; elsewhere passes count
    assert not design_for(pr, 10, pass_reach=0.0).fail_only
    assert not design_for(GateConfig(on_undetermined="warn"), 10).fail_only
