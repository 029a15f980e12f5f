"""`evals plan`: the gate's own test, simulated and checked against the real gates; sources
of every assumption; estimates pooled from the store."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evals.analysis.power import (
    DEFAULT_ICC,
    build_power_plan,
    latest_estimate,
    pooled_estimate,
)
from evals.cli import main
from evals.gates.catalog import planned_gate_count
from evals.model.gates import GateConfig
from evals.model.options import RunOptions
from evals.pipeline.evaluation import analyse, run_evaluation
from evals.stats import regression_gate_probability, shifted_case_rates
from evals.suite import load_suite
from validation.beta_binomial import outcome_records, simulated_suite, tagged_cases

pytestmark = pytest.mark.slow

AGENTS = """
def steady(prompt, options, context):
    case = int(context["vars"]["n"])
    return {"output": "yes" if (context["repeat"] + case) % (case + 2) else "no"}


def shaky(prompt, options, context):
    case = int(context["vars"]["n"])
    return {"output": "yes" if (context["repeat"] * 7 + case) % 3 else "no"}
"""


def _suite_text(cases: int = 8, repeat: int = 4, gates: str = "{baseline: base, candidate: cand}"):
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n"
        f"    metadata: {{tags: [t{n % 2}], priority: {'P0' if n == 0 else 'P1'}}}\n"
        "    assert: [{type: contains, value: 'yes'}]"
        for n in range(cases)
    )
    return (
        "prompts: ['{{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:steady, label: base}\n"
        "  - {id: file://agents.py:shaky, label: cand}\n"
        f"evaluateOptions: {{repeat: {repeat}}}\n"
        f"gates: {gates}\n"
        f"tests:\n{tests}\n"
    )


def test_plan_predicts_what_the_real_gates_do():
    """The plan's simulated detection against decide() on simulated runs of the model it
    plans for (baseline Beta(0.7, 0.4) case rates, the candidate one log-odds shift lower)."""
    cases, repeats, drop, builds = 24, 5, 0.2, 240
    suite = simulated_suite(tagged_cases(cases))
    suite.gates = GateConfig(baseline="base", candidate="cand", block_p0_regressions=False)
    plan = build_power_plan(
        suite,
        gates=planned_gate_count(suite, None),
        cases=cases,
        repeats=repeats,
        effect=drop,
        pass_rate=0.7,
        icc=DEFAULT_ICC,
    )
    assert plan.gates == 2 and plan.share == pytest.approx(0.025)
    population = shifted_case_rates(0.7, DEFAULT_ICC, 0.7 - drop)
    rng = np.random.default_rng(13)
    failed = 0
    for _ in range(builds):
        chosen = rng.integers(0, len(population[0]), cases)
        base = rng.random((cases, repeats)) < population[0][chosen][:, None]
        cand = rng.random((cases, repeats)) < population[1][chosen][:, None]
        records = [*outcome_records("base", base), *outcome_records("cand", cand)]
        _, report = analyse(suite, records, suite.gates, None)
        failed += next(g for g in report.gates if g.name == "regression").status == "fail"
    found = failed / builds
    predicted = plan.detection()
    assert abs(found - predicted) <= 3 * math.sqrt(predicted * (1 - predicted) / builds) + 0.01
    assert predicted == pytest.approx(
        regression_gate_probability(cases, repeats, 0.7, 0.5, DEFAULT_ICC, 0.0, 0.025), abs=0.06
    )


def test_plan_says_where_every_assumption_comes_from(write_suite):
    gates = "{baseline: base, candidate: cand, margin: 0.05, environments: {pr: {repeat: 3}}}"
    suite = load_suite(
        write_suite(_suite_text(cases=8, repeat=4, gates=gates), files={"agents.py": AGENTS})
    )
    plan = build_power_plan(suite, gates=planned_gate_count(suite, "pr"), environment="pr")
    assert (plan.cases.value, plan.cases.source) == (8, "the suite")
    assert (plan.repeats.value, plan.repeats.source) == (3, "the environment's gates.repeat")
    assert plan.icc.value == DEFAULT_ICC and plan.icc.source.startswith("default")
    assert plan.tolerance.value == 0.05
    assert plan.gates == 3  # error rate, regression, P0
    assert plan.p0_cases == 1
    flagged = build_power_plan(suite, gates=3, icc=0.2, tolerance=0.0, repeats=6)
    assert flagged.icc.source == "given on the command line" and flagged.tolerance.value == 0
    assert [row.repeats for row in flagged.table()] == [1, 3, 5, 6, 10, 20]
    powers = [row.power for row in flagged.table()]
    assert powers == sorted(powers)
    with pytest.raises(ValueError):
        build_power_plan(suite, gates=3, pass_rate=1.5)
    with pytest.raises(ValueError):
        build_power_plan(suite, gates=3, cases=1)


def test_the_smallest_drop_found_reaches_the_power():
    suite = simulated_suite(tagged_cases(40))
    suite.gates = GateConfig(baseline="base", candidate="cand")
    plan = build_power_plan(suite, gates=2, repeats=5, pass_rate=0.7, icc=0.3)
    drop = plan.detectable_drop()
    assert drop is not None and 0.05 < drop < 0.4
    row = next(r for r in plan.table() if r.repeats == 5)
    assert row.detectable_drop == pytest.approx(drop, abs=0.03)
    assert row.cases_needed is not None
    assert plan.probability(row.cases_needed, 5, 0.1, "fail") >= 0.8
    assert plan.probability(row.cases_needed - 1, 5, 0.1, "fail") < 0.8


def test_stored_estimates_are_pooled_over_recent_evaluations():
    def summary(rate, icc, cases):
        return {
            "agents": [
                {
                    "agent": "base",
                    "group": "suite",
                    "pass_rate": rate,
                    "icc": icc,
                    "cases": cases,
                    "k": 5,
                }
            ],
            "comparison": {"cases": [{"priority": "P0", "baseline": {"pass_rate": 1.0}}]},
        }

    pooled = pooled_estimate(
        [("new", summary(0.8, 0.5, 30)), ("old", summary(0.6, 0.2, 10))], "base"
    )
    assert pooled.pass_rate == pytest.approx((0.8 * 30 + 0.6 * 10) / 40)
    assert pooled.icc == pytest.approx((0.5 * 30 + 0.2 * 10) / 40)
    assert pooled.p0_rate == 1.0
    assert pooled.evaluation_ids == ("new", "old")
    assert "2 stored evaluations" in pooled.source
    assert pooled_estimate([], "base") is None


def test_estimates_come_from_the_store_and_the_cli_prints_the_plan(write_suite, tmp_path, capsys):
    path = write_suite(_suite_text(), files={"agents.py": AGENTS})
    suite = load_suite(path)
    store_url = f"sqlite:///{tmp_path / 'results.db'}"
    result = run_evaluation(suite, RunOptions(store_url=store_url, progress=False, trace=False))
    baseline = next(a for a in result.summary.agents if a.agent == "base")
    estimate = latest_estimate(store_url, suite)
    assert estimate is not None and estimate.evaluation_ids == (result.meta.id,)
    assert estimate.pass_rate == pytest.approx(baseline.pass_rate)
    assert estimate.icc == pytest.approx(baseline.icc)
    plan = build_power_plan(suite, gates=3, estimate=estimate, icc=DEFAULT_ICC)
    assert plan.pass_rate.source == f"estimated from {estimate.source}"
    assert plan.icc.source == "given on the command line"

    assert main(["plan", str(path), "--store", store_url, "--effect", "0.2"]) == 0
    out = capsys.readouterr().out
    assert f"stored evaluation {result.meta.id}" in out
    assert "the regression gate fails a drop of 0.2" in out
    assert "Identical agents pass it" in out
    assert "P0 cases (1" in out


def test_plan_without_a_store_uses_defaults_and_rejects_bad_input(
    write_suite, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    path = write_suite(_suite_text(), files={"agents.py": AGENTS})
    assert main(["plan", str(path), "--repeats", "10", "--env", "release"]) == 0
    out = capsys.readouterr().out
    assert "default (no stored estimate)" in out
    assert "(release)" in out
    assert not (tmp_path / ".evals").exists()
    assert main(["plan", str(path), "--baseline-rate", "1.5"]) == 2


def test_planned_gate_count_is_what_decide_counts(write_suite, tmp_path):
    gates = (
        "{baseline: base, candidate: cand, min_pass_rate: 0.3, max_flake_rate: 0.9, "
        "per_tag: {t0: {max_regression: 0.1}, t1: {min_pass_rate: 0.2}}}"
    )
    suite = load_suite(write_suite(_suite_text(gates=gates), files={"agents.py": AGENTS}))
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False, trace=False))
    families = {
        g.name.split("[")[0] + ("[tag]" if "[" in g.name else "")
        for g in result.gates.gates
        if g.share is not None
    }
    assert planned_gate_count(suite, None) == len(families) == 7
    shares = {round(g.share, 12) for g in result.gates.gates if g.share is not None}
    assert shares == {round(0.05 / 7, 12)}
