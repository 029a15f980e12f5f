"""decide() on simulated runs: each gate's limits against independent computations, the
budget split, families and their corrections, non-inferiority, and the reproduced defects."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evals.analysis.summarize import pass_rate_limit, summarize
from evals.gates.catalog import planned_gate_count
from evals.gates.decide import check_comparable, decide
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.summary import GateReport, GateResult
from evals.pipeline.evaluation import analyse
from evals.stats import (
    agreeing_confidence,
    mean_of_means_variance,
    stratified_difference,
    weighted_holm,
)
from evals.suite.gates import parse_gates
from validation.beta_binomial import case_rates, outcome_records, simulated_suite, tagged_cases

BASE = GateConfig(baseline="base", candidate="cand")


def gate(report: GateReport, name: str) -> GateResult:
    (result,) = [g for g in report.gates if g.name == name]
    return result


def runs(rng, rates_base, rates_cand, repeats):
    n = len(rates_base)
    return [
        *outcome_records("base", rng.random((n, repeats)) < np.asarray(rates_base)[:, None]),
        *outcome_records("cand", rng.random((n, repeats)) < np.asarray(rates_cand)[:, None]),
    ]


def decided(records, cases, config=BASE, environment=None, spend=None):
    suite = simulated_suite(cases)
    return analyse(suite, records, config, environment, spend=spend)


def statistical(report: GateReport) -> list[GateResult]:
    return [g for g in report.gates if g.share is not None]


# --- the build's budget -------------------------------------------------------------


@pytest.mark.slow
def test_budget_is_split_equally_among_statistical_gates_and_facts_spend_nothing():
    rng = np.random.default_rng(1)
    cases = tagged_cases(30, p0=range(5))
    rates = case_rates(rng, 30, 0.7, 0.3)
    config = replace(
        BASE,
        min_pass_rate=0.5,
        max_flake_rate=0.5,
        min_repeats=2,
        per_tag={f"t{i}": {"max_regression": 0.1} for i in range(5)},
    )
    summary, report = decided(runs(rng, rates, rates, 5), cases, config)
    families = {g.name.split("[")[0] for g in statistical(report)}
    assert families == {
        "min_pass_rate",
        "error_rate",
        "flake_rate",
        "regression",
        "p0_regressions",
    }
    # min_pass_rate, error_rate, flake_rate, regression, the regression[tag] family, P0
    assert [g.share for g in statistical(report)] == pytest.approx([0.05 / 6] * 10)
    assert gate(report, "policy").share is None and gate(report, "min_repeats").share is None
    assert report.spend == pytest.approx(0.05)
    assert planned_gate_count(simulated_suite(cases), None) == 1  # the error rate alone
    suite = simulated_suite(cases)
    suite.gates = config
    assert planned_gate_count(suite, None) == 6
    half = decide(summary, config, None, spend=0.01)
    assert [g.share for g in statistical(half)] == pytest.approx([0.01 / 6] * 10)
    assert [g.pass_level for g in statistical(half)] == pytest.approx([1 - 0.005] * 10)


def _clopper_pearson(successes: float, size: float, level: float, side: str) -> float:
    """The beta-quantile Clopper-Pearson limit, from scipy."""
    if side == "upper":
        return 1.0 if successes >= size else sps.beta.ppf(level, successes + 1, size - successes)
    return 0.0 if successes <= 0 else sps.beta.ppf(1 - level, successes, size - successes + 1)


@pytest.mark.parametrize("estimand", ["cases", "tasks"])
def test_min_pass_rate_limits_are_clopper_pearson_at_the_gate_levels(estimand):
    rng = np.random.default_rng(2)
    rates = case_rates(rng, 25, 0.75, 0.3)
    records = outcome_records("cand", rng.random((25, 4)) < rates[:, None])
    suite = simulated_suite(tagged_cases(25), agents=("cand",))
    config = GateConfig(candidate="cand", min_pass_rate=0.6, estimand=estimand)
    summary = summarize(records, suite, config)
    report = decide(summary, config, None)
    result = gate(report, "min_pass_rate")
    agent = summary.agents[0]
    case_rates_seen = [s.passes / s.counted for s in summary.case_stats]
    variance = mean_of_means_variance(case_rates_seen)
    mean = sum(case_rates_seen) / 25
    share = 0.05 / 2  # min_pass_rate and error_rate

    def size(level: float) -> float:
        if estimand == "cases":
            return 100.0  # 25 cases of 4 runs: the pooled runs
        effective = min(max(mean * (1 - mean) / variance, 25), 100)
        return effective * (sps.norm.ppf(level) / sps.t.ppf(level, 24)) ** 2

    fail_high = _clopper_pearson(mean * size(1 - share), size(1 - share), 1 - share, "upper")
    pass_low = _clopper_pearson(mean * size(0.975), size(0.975), 0.975, "lower")
    assert agent.variance == pytest.approx(variance)
    assert result.fail_limit == pytest.approx(fail_high, abs=1e-9)
    assert result.pass_limit == pytest.approx(pass_low, abs=1e-9)
    assert result.fail_level == pytest.approx(1 - share)
    expected = "fail" if fail_high < 0.6 else "pass" if pass_low >= 0.6 else "undetermined"
    assert result.status == expected
    assert result.about == ("on these 25 cases" if estimand == "cases" else "on tasks like these")


@pytest.mark.slow
def test_min_pass_rate_keeps_its_level_at_the_ceiling():
    """The Wilson limit misses its one-sided level near a rate of 1 (4.8 % against 2.5 % at
    100 cases of one run); the gate's exact limit does not: for every true rate of a
    100-case, one-run suite whose cases share that rate, the chance that the pass limit
    at 97.5 % lies above it is at most 2.5 %, computed exactly over the binomial."""
    config = GateConfig(candidate="cand", min_pass_rate=0.9)
    suite = simulated_suite(tagged_cases(100), agents=("cand",))
    lows = []
    for passes in range(0, 101, 1):
        outcomes = np.arange(100)[:, None] < passes
        agent = summarize(outcome_records("cand", outcomes), suite, config).agents[0]
        lows.append(pass_rate_limit(agent, "cases", 0.975, "lower"))
    for rate in np.linspace(0.85, 0.999, 60):
        missed = sum(sps.binom.pmf(k, 100, rate) for k, low in enumerate(lows) if low > rate)
        assert missed <= 0.025 + 1e-12


def test_regression_gate_is_the_stratified_score_test_on_these_cases_at_its_share():
    rng = np.random.default_rng(3)
    rates = case_rates(rng, 40, 0.7, 0.3)
    worse = np.clip(rates - 0.15, 0, 1)
    config = replace(BASE, max_regression=0.05, block_p0_regressions=False)
    summary, report = decided(runs(rng, rates, worse, 5), tagged_cases(40), config)
    result = gate(report, "regression")
    cand = {s.case_id: s for s in summary.case_stats if s.agent == "cand"}
    base = {s.case_id: s for s in summary.case_stats if s.agent == "base"}
    test = stratified_difference(
        [cand[c].passes for c in cand],
        [cand[c].counted for c in cand],
        [base[c].passes for c in cand],
        [base[c].counted for c in cand],
    )
    share = 0.05 / 2  # error_rate and regression
    assert result.fail_limit == pytest.approx(test.limit(1 - share, "upper"), abs=1e-12)
    assert result.pass_limit == pytest.approx(test.limit(0.975, "lower"), abs=1e-12)
    # The fail limit lies below the tolerated loss exactly when the test's p-value there is
    # below the share.
    p = test.p_value(-0.05, "less")
    assert (result.fail_limit < -0.05) == (p < share)
    assert result.status == ("fail" if p < share else result.status)
    assert result.about == "on these 40 cases"
    assert result.detectable is not None and 0.05 < result.detectable < 1
    assert f"this run would catch {100 * -result.detectable:+.1f} pp" in result.reason


@pytest.mark.slow
def test_regression_gate_on_tasks_is_the_t_test_on_case_differences_at_its_share():
    rng = np.random.default_rng(3)
    rates = case_rates(rng, 40, 0.7, 0.3)
    worse = np.clip(rates - 0.35, 0, 1)
    config = replace(BASE, max_regression=0.05, block_p0_regressions=False, estimand="tasks")
    summary, report = decided(runs(rng, rates, worse, 5), tagged_cases(40), config)
    result = gate(report, "regression")
    cand = {s.case_id: s for s in summary.case_stats if s.agent == "cand"}
    base = {s.case_id: s for s in summary.case_stats if s.agent == "base"}
    differences = np.array([cand[c].pass_rate - base[c].pass_rate for c in cand])
    spread = differences.std(ddof=1) / math.sqrt(40)
    assert summary.comparison.overall.standard_error >= spread - 1e-12
    share = 0.05 / 2  # error_rate and regression
    se = summary.comparison.overall.standard_error
    assert result.fail_limit == pytest.approx(
        differences.mean() + sps.t.ppf(1 - share, 39) * se, abs=1e-9
    )
    assert result.pass_limit == pytest.approx(
        differences.mean() - sps.t.ppf(0.975, 39) * se, abs=1e-9
    )
    assert result.status == "fail"
    assert "fails below -5.0 pp" in result.reason


# --- the reproduced defects -----------------------------------------------------------


def test_a_candidate_whose_every_run_errors_fails_the_build_naming_the_error():
    """Before: errors were left out of pass rates, nothing gated the error rate and an
    undetermined verdict exited 0."""
    rng = np.random.default_rng(4)
    n = 12
    rates = case_rates(rng, n, 0.8, 0.3)
    base = outcome_records("base", rng.random((n, 3)) < rates[:, None])
    errored = np.ones((n, 3), dtype=bool)
    cand = outcome_records(
        "cand", errored, errors=errored, error_kind="infra", error="OPENAI_API_KEY is not set"
    )
    summary, report = decided(base + cand, tagged_cases(n))
    assert report.verdict == "fail" and not report.passed
    errors = gate(report, "error_rate")
    assert errors.status == "fail"
    assert "most often infra (36)" in errors.reason
    assert "OPENAI_API_KEY is not set" in errors.reason
    assert gate(report, "regression").status == "fail"
    candidate = next(a for a in summary.agents if a.agent == "cand")
    assert candidate.pass_rate == 0.0 and candidate.error_rate == 1.0


def test_missing_keys_for_both_agents_fail_the_build():
    errored = np.ones((10, 3), dtype=bool)
    records = [
        *outcome_records("base", errored, errors=errored, error_kind="infra", error="no key"),
        *outcome_records("cand", errored, errors=errored, error_kind="infra", error="no key"),
    ]
    _, report = decided(records, tagged_cases(10))
    assert gate(report, "error_rate").status == "fail"
    assert "base: 30 of 30 runs errored" in gate(report, "error_rate").reason
    assert not report.passed


@pytest.mark.slow
def test_excluded_error_kinds_leave_pass_rates_but_not_the_error_rate():
    rng = np.random.default_rng(5)
    outcomes = rng.random((20, 5)) < 0.8
    errors = np.zeros((20, 5), dtype=bool)
    errors[:4, 0] = True
    records = [
        *outcome_records("base", outcomes),
        *outcome_records("cand", outcomes, errors=errors, error_kind="infra", error="503"),
    ]
    config = replace(BASE, exclude_errors=["infra"])
    summary, report = decided(records, tagged_cases(20), config)
    candidate = next(a for a in summary.agents if a.agent == "cand")
    assert candidate.excluded == 4 and candidate.counted == 96
    assert candidate.error_rate == pytest.approx(4 / 100)
    counted, _ = decided(records, tagged_cases(20))
    fails_counted = next(a for a in counted.agents if a.agent == "cand")
    assert fails_counted.counted == 100
    assert fails_counted.pass_rate < candidate.pass_rate
    assert "4 excluded from the pass rates" in gate(report, "error_rate").reason


@pytest.mark.slow
def test_identical_agents_with_per_tag_gates_fail_the_build_within_alpha():
    """Before: regression[tag] decided on the raw MOVER interval and identical agents
    failed 12-20 % of builds. Every gate at the edge of its null (tolerance 0)."""
    rng = np.random.default_rng(6)
    cases = tagged_cases(30, p0=range(5))
    config = replace(BASE, per_tag={f"t{i}": {"max_regression": 0.0} for i in range(5)})
    suite = simulated_suite(cases)
    builds, failed, tag_failed = 300, 0, 0
    for _ in range(builds):
        rates = case_rates(rng, 30, 0.7, 0.3)
        _, report = analyse(suite, runs(rng, rates, rates, 5), config, None)
        failed += report.verdict == "fail"
        tag_failed += any(
            g.name.startswith("regression[") and g.status == "fail" for g in report.gates
        )
    assert failed / builds <= 0.05
    assert tag_failed / builds <= 0.05 / 4 + 3 * math.sqrt(0.0125 / builds)


def test_suite_and_tag_regression_rows_are_one_weighted_holm_graph_and_say_so():
    rng = np.random.default_rng(7)
    cases = tagged_cases(30)
    rates = case_rates(rng, 30, 0.7, 0.3)
    worse = rates.copy()
    worse[[i for i in range(30) if i % 5 == 0]] = 0.0
    config = replace(BASE, per_tag={f"t{i}": {"max_regression": 0.05} for i in range(5)})
    _summary, report = decided(runs(rng, rates, worse, 5), cases, config)
    rows = [g for g in report.gates if g.name.startswith("regression")]
    assert [g.name for g in rows] == ["regression", *(f"regression[t{i}]" for i in range(5))]
    suite_share, tag_share = rows[0].share, rows[1].share
    starts = [suite_share] + [tag_share / 5] * 5
    pooled = suite_share + tag_share
    q_values = weighted_holm([g.p_value for g in rows], starts)
    for result, q in zip(rows, q_values, strict=True):
        assert result.adjusted_p == pytest.approx(q)
        assert result.fail_level == pytest.approx(agreeing_confidence(result.p_value, q, pooled))
        assert (result.status == "fail") == (q <= pooled)
        if result.status != "fail":
            assert "shown beyond" not in result.reason
    assert gate(report, "regression[t0]").status == "fail"
    assert "Holm within 6" in gate(report, "regression[t0]").reason


def test_a_tag_is_named_at_the_suites_share_once_the_suite_row_failed():
    """Before: the tag rows were a Holm family of their own at their gate's share, so a
    broken tag with p between its first step and the suite's share stayed undetermined
    while the suite row failed."""
    cases = tagged_cases(20, tags=4)
    config = replace(BASE, per_tag={f"t{i}": {"max_regression": 0.1} for i in range(4)})
    base = np.ones((20, 5), dtype=bool)
    cand = base.copy()
    # tag t0 (cases 0, 4, 8, 12, 16) fails 9 of its 25 runs, the baseline none
    cand[[0, 4, 8, 12, 16], 0] = False
    cand[[0, 4, 8, 12], 1] = False
    records = [*outcome_records("base", base), *outcome_records("cand", cand)]
    _summary, report = decided(records, cases, config)
    suite, tag = gate(report, "regression"), gate(report, "regression[t0]")
    assert suite.status == "fail"
    assert tag.p_value is not None and tag.adjusted_p is not None
    assert tag.p_value > tag.share / 4, "the tag misses its own first step"
    assert tag.status == "fail" and tag.adjusted_p <= suite.share + tag.share


def _p0_build(rng, drop_case: int | None, repeats: int = 5, base_rate: float = 1.0):
    cases = tagged_cases(30, p0=range(6))
    rates = case_rates(rng, 30, 0.7, 0.3)
    rates[:6] = base_rate
    base = rng.random((30, repeats)) < rates[:, None]
    cand = rng.random((30, repeats)) < rates[:, None]
    if drop_case is not None:
        base[drop_case] = True
        cand[drop_case] = False
    records = [*outcome_records("base", base), *outcome_records("cand", cand)]
    return decided(records, cases)


def test_a_p0_case_dropping_5_of_5_to_0_of_5_fails_the_p0_gate():
    """Before: BH over all 30 cases left it "inconclusive" and the gate passed on the
    absence of evidence."""
    _summary, report = _p0_build(np.random.default_rng(8), drop_case=2)
    result = gate(report, "p0_regressions")
    assert result.status == "fail"
    assert "loss shown on c2 -100.0 pp" in result.reason
    assert result.p_value == pytest.approx(2**-10, rel=1e-6)
    assert result.fail_limit < 0
    assert not report.passed


@pytest.mark.slow
def test_the_p0_gate_never_passes_cases_it_cannot_judge():
    _, few = _p0_build(np.random.default_rng(9), drop_case=None, repeats=5)
    result = gate(few, "p0_regressions")
    assert result.status == "undetermined"
    assert "do not count as passed" in result.reason
    _, many = _p0_build(np.random.default_rng(9), drop_case=None, repeats=40)
    assert gate(many, "p0_regressions").status == "pass"
    assert gate(many, "p0_regressions").pass_limit >= -0.2


def test_flake_gate_reads_a_property_of_the_agent_not_of_the_repeats():
    """Before: the share of cases that both passed and failed was gated, which grows with
    k (the same agent passed a 30 % limit at k = 5 and failed it at k = 20)."""
    rng = np.random.default_rng(10)
    rates = case_rates(rng, 60, 0.7, 0.3)
    truth = float(np.mean(2 * rates * (1 - rates)))
    suite = simulated_suite(tagged_cases(60), agents=("cand",))
    config = GateConfig(candidate="cand", max_flake_rate=truth + 0.12)
    for repeats in (5, 20):
        records = outcome_records("cand", rng.random((60, repeats)) < rates[:, None])
        summary = summarize(records, suite, config)
        result = gate(decide(summary, config, None), "flake_rate")
        share_of_flaky = np.mean([0 < s.passes < s.counted for s in summary.case_stats])
        assert abs(result.measured - truth) < 0.06
        assert result.status != "fail"
        if repeats == 20:
            assert share_of_flaky > truth + 0.12  # what the old gate read and failed on


def test_an_environment_override_equal_to_a_default_applies():
    """Before: release: {margin: 0} over a top-level 0.05 still gave 0.05."""
    config = parse_gates(
        {"margin": 0.05, "environments": {"release": {"margin": 0, "min_pass_rate": None}}},
        ["a", "b"],
    )
    assert config.for_environment("release").margin == 0
    assert config.for_environment("pr").margin == 0.05
    assert config.environments == {"release": {"margin": 0.0, "min_pass_rate": None}}
    switched_off = parse_gates(
        {"min_pass_rate": 0.8, "environments": {"pr": {"min_pass_rate": None}}}, ["a"]
    )
    assert switched_off.for_environment("pr").min_pass_rate is None
    with pytest.raises(SuiteError, match="cannot set latency"):
        parse_gates({"environments": {"pr": {"latency": "agent"}}}, ["a"])


def test_old_stored_environments_keep_their_overrides():
    stored = GateConfig(margin=0.05).to_dict()
    stored["environments"] = {
        "release": {**GateConfig(min_pass_rate=0.9).to_dict(), "environments": {}}
    }
    again = GateConfig.from_dict(stored)
    assert again.environments == {"release": {"min_pass_rate": 0.9}}
    assert again.for_environment("release").margin == 0.05


def test_latency_gate_reads_the_same_latency_as_the_budget_grader():
    """Before: the budget grader used the agent's report (9100 ms) while p95 and
    max_latency_ratio used the wall clock (461 ms)."""

    def record(agent, case, repeat, reported):
        return RunRecord(
            key=RunKey("", f"c{case}", agent, repeat),
            case_index=case,
            prompt_index=0,
            agent_index=0,
            seed=repeat,
            prompt="",
            vars={},
            response=AgentResponse(cost=0.01, latency_ms=reported),
            status="pass",
            grade=Grade(True, 1.0, ""),
            latency_ms=461.0 + case + repeat,
        )

    records = [
        record(agent, case, repeat, (9100.0 if agent == "cand" else 4200.0) + repeat)
        for agent in ("base", "cand")
        for case in range(10)
        for repeat in range(3)
    ]
    config = replace(BASE, max_latency_ratio=1.5, latency="agent")
    summary, report = decided(records, tagged_cases(10), config)
    assert summary.latency_source == "agent"
    assert summary.comparison.latency_ratio == pytest.approx(9102 / 4202)
    assert gate(report, "latency_ratio").status == "fail"
    assert "p95 latency (agent)" in gate(report, "latency_ratio").reason
    wall, wall_report = decided(records, tagged_cases(10), replace(config, latency="wall"))
    assert wall.comparison.latency_ratio == pytest.approx(1.0)
    assert gate(wall_report, "latency_ratio").status == "pass"


# --- undetermined, and what each environment does with it ------------------------------


@pytest.mark.parametrize(
    ("environment", "override", "passes"),
    [
        (None, None, True),
        ("pr", None, True),
        ("nightly", None, True),
        ("release", None, False),
        ("pr", "fail", False),
        ("release", "warn", True),
        ("release", "pass", True),
    ],
)
def test_on_undetermined_decides_what_an_undetermined_verdict_does(environment, override, passes):
    rng = np.random.default_rng(11)
    rates = case_rates(rng, 20, 0.7, 0.3)
    environments = {environment: {"on_undetermined": override}} if override else {}
    config = replace(BASE, environments=environments)
    _, report = decided(runs(rng, rates, rates, 5), tagged_cases(20), config, environment)
    assert report.verdict == "undetermined"
    assert report.passed is passes
    default = {"release": "fail", "pr": "pass"}.get(environment or "", "warn")
    assert report.on_undetermined == (override or default)
    assert report.outcome == ("pass" if report.on_undetermined == "pass" else "undetermined")
    assert report.config["on_undetermined"] == report.on_undetermined
    assert report.to_dict()["passed"] is passes


# --- every gate's status agrees with the limits it shows --------------------------------


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**31),
    st.floats(0.3, 0.95),
    st.floats(-0.3, 0.1),
    st.integers(2, 8),
    st.sampled_from([0.0, 0.05, 0.1]),
)
def test_every_statistical_gate_shows_the_limits_it_decided_on(seed, mu, shift, repeats, tol):
    rng = np.random.default_rng(seed)
    rates = case_rates(rng, 16, mu, 0.3)
    config = replace(
        BASE,
        min_pass_rate=0.6,
        max_flake_rate=0.3,
        max_regression=tol,
        per_tag={"t0": {"max_regression": tol}, "t1": {"min_pass_rate": 0.5}},
    )
    cases = tagged_cases(16, tags=4, p0=(0, 1, 2))
    _, report = decided(runs(rng, rates, np.clip(rates + shift, 0, 1), repeats), cases, config)
    for result in statistical(report):
        if result.name == "p0_regressions" or result.fail_limit is None:
            continue
        higher = result.name.startswith(("min_pass_rate", "regression"))
        fail_at = result.threshold
        beyond = result.fail_limit < fail_at if higher else result.fail_limit > fail_at
        within = result.pass_limit >= fail_at if higher else result.pass_limit <= fail_at
        expected = "fail" if beyond else "pass" if within else "undetermined"
        assert result.status == expected, result
        assert result.interval == (
            min(result.fail_limit, result.pass_limit),
            max(result.fail_limit, result.pass_limit),
        )


def test_policy_violation_fails_whatever_the_rates():
    records = outcome_records("cand", np.ones((10, 3), dtype=bool))
    records[0].grade = Grade(True, 1.0, "", policy_violation=True)
    suite = simulated_suite(tagged_cases(10), agents=("cand",))
    config = GateConfig(candidate="cand")
    report = decide(summarize(records, suite, config), config, None)
    assert gate(report, "policy").status == "fail" and report.verdict == "fail"


def test_cost_per_accepted_gate():
    records = outcome_records("cand", np.ones((10, 3), dtype=bool))
    for index, record in enumerate(records):
        record.response.cost = 0.1 + 0.01 * (index % 3)
    suite = simulated_suite(tagged_cases(10), agents=("cand",))
    summary = summarize(records, suite, GateConfig(candidate="cand"))
    cheap = decide(summary, GateConfig(candidate="cand", max_cost_per_accepted=0.2), None)
    assert gate(cheap, "cost_per_accepted").status == "pass"
    dear = decide(summary, GateConfig(candidate="cand", max_cost_per_accepted=0.05), None)
    assert gate(dear, "cost_per_accepted").status == "fail"
    failing = outcome_records("cand", np.zeros((10, 3), dtype=bool))
    for record in failing:
        record.response.cost = 0.1
    broke = summarize(failing, suite, GateConfig(candidate="cand"))
    config = GateConfig(candidate="cand", max_cost_per_accepted=0.2)
    assert gate(decide(broke, config, None), "cost_per_accepted").status == "fail"


def test_check_comparable():
    assert check_comparable("abc", "abc", allow=False) == []
    warnings = check_comparable("abc", "abd", allow=True)
    assert len(warnings) == 1 and "differ" in warnings[0]
    with pytest.raises(SuiteError, match="not comparable"):
        check_comparable("abc", "abd", allow=False)


def test_new_gate_keys_are_validated():
    assert parse_gates({"equivalence_margin": 0.02}, ["a"]).equivalence_margin == 0.02
    with pytest.raises(SuiteError, match="between 0 and 1"):
        parse_gates({"equivalence_margin": 2}, ["a"])
    with pytest.raises(SuiteError, match="one of fail, warn, pass"):
        parse_gates({"on_undetermined": "maybe"}, ["a"])
    with pytest.raises(SuiteError, match="unknown error kind"):
        parse_gates({"exclude_errors": ["network"]}, ["a"])
    with pytest.raises(SuiteError, match="one of wall, agent"):
        parse_gates({"latency": "cpu"}, ["a"])
    assert parse_gates({"max_error_rate": None}, ["a"]).max_error_rate is None
    assert parse_gates({}, ["a"]).max_error_rate == 0.05
    assert parse_gates({"exclude_errors": "infra"}, ["a"]).exclude_errors == ["infra"]
