"""`evals plan`: power numbers against independent computations, sources, stored estimates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.power import NormalIndPower

from evals.analysis.power import DEFAULT_ICC, build_power_plan, latest_estimate
from evals.cli import main
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.stats import (
    cases_needed,
    difference_standard_error,
    minimum_detectable_effect,
    repeats_needed,
)
from evals.stats.distributions import normal_quantile
from evals.suite import load_suite

AGENTS = """
def steady(prompt, options, context):
    case = int(context["vars"]["n"])
    return {"output": "yes" if (context["repeat"] + case) % (case + 2) else "no"}


def shaky(prompt, options, context):
    case = int(context["vars"]["n"])
    return {"output": "yes" if (context["repeat"] * 7 + case) % 3 else "no"}
"""


def _suite_text(cases: int = 8, repeat: int = 4) -> str:
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n    assert: [{{type: contains, value: 'yes'}}]"
        for n in range(cases)
    )
    return (
        "prompts: ['{{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:steady, label: base}\n"
        "  - {id: file://agents.py:shaky, label: cand}\n"
        f"evaluateOptions: {{repeat: {repeat}}}\n"
        "gates: {baseline: base, candidate: cand}\n"
        f"tests:\n{tests}\n"
    )


@pytest.mark.parametrize(
    ("n_cases", "pass_rate", "alpha", "power"),
    [(30, 0.7, 0.05, 0.8), (100, 0.5, 0.01, 0.9), (12, 0.85, 0.1, 0.8)],
)
def test_single_run_no_clustering_matches_statsmodels(n_cases, pass_rate, alpha, power):
    spread = math.sqrt(pass_rate * (1 - pass_rate))
    solver = NormalIndPower()
    cohen_d = solver.solve_power(nobs1=n_cases, alpha=alpha, power=power, ratio=1.0)
    mde = minimum_detectable_effect(n_cases, 1, pass_rate, 0.0, alpha=alpha, power=power)
    assert mde == pytest.approx(cohen_d * spread, rel=1e-4)
    effect = 0.15
    needed = solver.solve_power(effect_size=effect / spread, alpha=alpha, power=power, ratio=1.0)
    assert cases_needed(effect, 1, pass_rate, 0.0, alpha=alpha, power=power) == math.ceil(needed)


def _case_rates(rng, shape, pass_rate, icc):
    scale = (1 - icc) / icc
    return rng.beta(pass_rate * scale, (1 - pass_rate) * scale, size=shape)


@pytest.mark.parametrize(
    ("n_cases", "repeats", "pass_rate", "icc", "correlation"),
    [(30, 5, 0.7, 0.3, 0.0), (20, 3, 0.6, 0.5, 0.6), (15, 10, 0.8, 0.2, 1.0)],
)
def test_standard_error_matches_a_clustered_simulation(
    n_cases, repeats, pass_rate, icc, correlation
):
    """Two agents over random cases; with probability rho a case is equally hard for both."""
    rng = np.random.default_rng(7)
    simulations = 20_000
    first = _case_rates(rng, (simulations, n_cases), pass_rate, icc)
    other = _case_rates(rng, (simulations, n_cases), pass_rate, icc)
    second = np.where(rng.random((simulations, n_cases)) < correlation, first, other)
    mean_first = rng.binomial(repeats, first).mean(axis=1) / repeats
    mean_second = rng.binomial(repeats, second).mean(axis=1) / repeats
    simulated = np.std(mean_first - mean_second, ddof=1)
    formula = difference_standard_error(n_cases, repeats, pass_rate, icc, correlation)
    assert simulated == pytest.approx(formula, rel=0.03)


@given(
    effect=st.floats(0.02, 0.5),
    n_cases=st.integers(5, 400),
    pass_rate=st.floats(0.05, 0.95),
    icc=st.floats(0.0, 0.95),
    correlation=st.floats(0.0, 0.95),
)
def test_repeats_needed_is_the_fewest_that_reach_the_effect(
    effect, n_cases, pass_rate, icc, correlation
):
    model = {"pass_rate": pass_rate, "icc": icc, "correlation": correlation}
    needed = repeats_needed(effect, n_cases, **model)
    if needed is None:
        z = normal_quantile(0.975) + normal_quantile(0.8)
        floor = z * math.sqrt(2 * icc * pass_rate * (1 - pass_rate) * (1 - correlation) / n_cases)
        assert floor >= effect * (1 - 1e-9)
        return
    assert minimum_detectable_effect(n_cases, needed, **model) <= effect * (1 + 1e-9)
    if needed > 1:
        assert minimum_detectable_effect(n_cases, needed - 1, **model) > effect


def test_plan_says_where_every_assumption_comes_from(write_suite):
    suite = load_suite(write_suite(_suite_text(cases=8, repeat=4), files={"agents.py": AGENTS}))
    plan = build_power_plan(suite, effect=0.2, icc=0.4)
    assert (plan.cases.value, plan.cases.source) == (8, "the suite")
    assert (plan.repeats.value, plan.repeats.source) == (4, "the suite's evaluateOptions")
    assert plan.icc.value == 0.4 and plan.icc.source == "given on the command line"
    assert plan.pass_rate.source.startswith("default")
    assert [row.repeats for row in plan.table()] == [1, 3, 4, 5, 10, 20]
    row = next(r for r in plan.table() if r.repeats == 4)
    assert row.design_effect == pytest.approx(1 + 3 * 0.4)
    assert row.mde_paired < row.mde_independent
    assert row.mde_paired == pytest.approx(plan.mde(True))
    assert row.cases_paired == cases_needed(0.2, 4, 0.7, 0.4, 0.5)
    with pytest.raises(ValueError):
        build_power_plan(suite, pass_rate=1.5)


def test_estimates_come_from_the_latest_stored_evaluation(write_suite, tmp_path, capsys):
    path = write_suite(_suite_text(), files={"agents.py": AGENTS})
    suite = load_suite(path)
    store_url = f"sqlite:///{tmp_path / 'results.db'}"
    result = run_evaluation(suite, RunOptions(store_url=store_url, progress=False, trace=False))
    baseline = next(a for a in result.summary.agents if a.agent == "base")
    assert baseline.icc is not None and 0 < baseline.pass_rate < 1

    estimate = latest_estimate(store_url, suite)
    assert estimate is not None
    assert estimate.evaluation_id == result.meta.id
    assert estimate.pass_rate == pytest.approx(baseline.pass_rate)
    assert estimate.icc == pytest.approx(baseline.icc)
    assert estimate.correlation == pytest.approx(result.summary.comparison.overall.correlation)
    plan = build_power_plan(suite, estimate=estimate, icc=DEFAULT_ICC)
    assert plan.pass_rate.source == f"estimated from {estimate.source}"
    assert plan.icc.source == "given on the command line"

    assert main(["plan", str(path), "--store", store_url, "--effect", "0.2"]) == 0
    out = capsys.readouterr().out
    assert f"stored evaluation {result.meta.id}" in out
    assert "MDE at 8 cases" in out
    assert f"{baseline.pass_rate:.3g}" in out


def test_plan_without_a_store_uses_defaults_and_rejects_bad_input(
    write_suite, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    path = write_suite(_suite_text(), files={"agents.py": AGENTS})
    assert main(["plan", str(path), "--repeats", "10"]) == 0
    out = capsys.readouterr().out
    assert "default (no stored estimate)" in out
    assert not (tmp_path / ".evals").exists()
    assert main(["plan", str(path), "--baseline-rate", "1.5"]) == 2
