"""summarize() on hand-built run records."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.analysis.summarize import summarize
from evals.model.gates import GateConfig
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Case
from evals.stats import (
    agreeing_confidence,
    exact_score_interval,
    exact_score_p_value,
    fcr_confidence,
    flake_probability,
    holm,
    paired_exact_interval,
    paired_exact_p_value,
    wilson_interval,
)
from validation.beta_binomial import case_rates, outcome_records, simulated_suite, tagged_cases


def make_case(case_id: str, tags=(), priority=None) -> Case:
    metadata = {"tags": list(tags)}
    if priority:
        metadata["priority"] = priority
    return Case(index=0, id=case_id, description=case_id, vars={}, asserts=[], metadata=metadata)


def make_run(
    case_id,
    agent,
    repeat,
    status,
    *,
    seed=None,
    cost=0.01,
    latency=100.0,
    violation=False,
    kind="agent_error",
    message="agent raised ValueError: boom",
):
    passed = status == "pass"
    grade = (
        None if status == "error" else Grade(passed, float(passed), "", policy_violation=violation)
    )
    errored = status == "error"
    return RunRecord(
        key=RunKey("", case_id, agent, repeat),
        case_index=0,
        prompt_index=0,
        agent_index=0,
        seed=repeat if seed is None else seed,
        prompt="",
        vars={},
        response=AgentResponse(cost=cost),
        status=status,
        grade=grade,
        error=message if errored else None,
        error_kind=kind if errored else None,
        latency_ms=latency,
        metadata={"shared_seed": repeat if seed is None else seed},
    )


def runs(case_id, agent, outcomes, **kwargs):
    return [make_run(case_id, agent, i, s, **kwargs) for i, s in enumerate(outcomes)]


CONFIG = GateConfig(baseline="base", candidate="cand")


def test_errors_count_as_failed_runs():
    suite = simulated_suite([make_case("c1")], agents=("cand",))
    records = runs("c1", "cand", ["pass", "pass", "fail", "error"])
    summary = summarize(records, suite, GateConfig(candidate="cand"))
    (stats,) = summary.case_stats
    assert (stats.runs, stats.passes, stats.fails, stats.errors) == (4, 2, 1, 1)
    assert stats.counted == 4
    assert stats.pass_rate == pytest.approx(2 / 4)
    assert stats.interval == wilson_interval(2, 4)
    assert stats.flake == pytest.approx(2 * 2 * 2 / (4 * 3))
    assert summary.comparison is None
    (agent,) = summary.agents
    assert agent.error_rate == pytest.approx(0.25)
    assert agent.error_kinds == {"agent_error": 1}
    assert agent.first_errors == {"agent_error": "agent raised ValueError: boom"}


def test_excluded_error_kinds_are_counted_apart_and_reported():
    suite = simulated_suite([make_case("c1")], agents=("cand",))
    records = [
        *runs("c1", "cand", ["pass", "pass", "fail"]),
        make_run("c1", "cand", 3, "error", kind="infra", message="503 from the gateway"),
        make_run("c1", "cand", 4, "error", kind="timeout", message="agent timed out after 5 s"),
    ]
    config = GateConfig(candidate="cand", exclude_errors=["infra"])
    summary = summarize(records, suite, config)
    (stats,) = summary.case_stats
    assert stats.excluded == 1 and stats.counted == 4
    assert stats.pass_rate == pytest.approx(2 / 4)
    (agent,) = summary.agents
    assert agent.excluded == 1
    assert agent.error_rate == pytest.approx(2 / 5)
    assert agent.error_kinds == {"infra": 1, "timeout": 1}
    assert agent.first_errors["infra"] == "503 from the gateway"


def test_suite_rate_is_mean_of_case_rates_not_run_rate():
    suite = simulated_suite([make_case("a"), make_case("b")], agents=("cand",))
    records = runs("a", "cand", ["pass"] * 9 + ["fail"]) + runs("b", "cand", ["fail", "pass"])
    (agent,) = summarize(records, suite, GateConfig(candidate="cand")).agents
    assert agent.pass_rate == pytest.approx((0.9 + 0.5) / 2)
    assert agent.run_pass_rate == pytest.approx(10 / 12)
    assert agent.interval[0] <= agent.pass_rate <= agent.interval[1]
    assert agent.cases == 2 and agent.runs == 12
    assert agent.k == 2
    assert agent.flake_probability == pytest.approx((2 * 9 * 1 / 90 + 1.0) / 2)
    assert (agent.flake_probability, agent.flake_interval) == flake_probability([(9, 10), (1, 2)])


def _random_records(seed: int, n_cases: int = 12, repeats: int = 4, drop: float = 0.15):
    rng = random.Random(seed)
    cases = [
        make_case(f"c{i}", tags=[f"t{i % 3}"], priority="P0" if i == 0 else "P2")
        for i in range(n_cases)
    ]
    records = []
    for case in cases:
        p = rng.random()
        for agent, shift in (("base", 0.0), ("cand", -drop)):
            outcomes = ["pass" if rng.random() < p + shift else "fail" for _ in range(repeats)]
            records += runs(
                case.id,
                agent,
                outcomes,
                latency=rng.uniform(50, 500),
                cost=rng.uniform(0.001, 0.01),
            )
    return cases, records


def test_summary_invariant_to_record_and_case_order():
    cases, records = _random_records(1)
    first = summarize(records, simulated_suite(cases), CONFIG)
    rng = random.Random(2)
    shuffled = list(records)
    rng.shuffle(shuffled)
    reordered_cases = list(reversed(cases))
    second = summarize(shuffled, simulated_suite(reordered_cases), CONFIG)
    assert first.comparison.overall.interval == pytest.approx(second.comparison.overall.interval)
    assert first.agents[0].pass_rate == pytest.approx(second.agents[0].pass_rate)
    assert first.agents[0].standard_error == pytest.approx(second.agents[0].standard_error)
    assert (
        first.comparison.latency_ratio_interval
        == pytest.approx(second.comparison.latency_ratio_interval)
        or first.comparison.latency_ratio_interval is None
    )


def test_swapping_baseline_and_candidate_negates_the_difference():
    cases, records = _random_records(3)
    forward = summarize(records, simulated_suite(cases), CONFIG).comparison
    backward = summarize(
        records, simulated_suite(cases), GateConfig(baseline="cand", candidate="base")
    ).comparison
    low, high = forward.overall.interval
    assert backward.overall.interval == pytest.approx((-high, -low), abs=1e-12)
    for a, b in zip(forward.cases, backward.cases, strict=True):
        assert a.p_value == pytest.approx(b.p_value)
        assert b.difference == pytest.approx(-a.difference)


def test_unpaired_case_uses_the_exact_score_test_and_its_inversion():
    suite = simulated_suite([make_case("c")])
    records = runs("c", "base", ["pass"] * 6, seed=1) + [
        make_run("c", "cand", i, "fail", seed=100 + i) for i in range(6)
    ]
    (case,) = summarize(records, suite, CONFIG).comparison.cases
    assert not case.paired
    assert case.difference == -1.0
    assert case.p_value == exact_score_p_value(0, 6, 6, 6)
    assert case.p_adjusted == case.p_value and case.level == pytest.approx(0.95)
    assert case.interval == exact_score_interval(0, 6, 6, 6, 0.95)
    assert case.verdict == "regression"
    assert case.reason == "significant (q = 0.000488); the interval at 95 % lies wholly below -0"


def test_paired_runs_use_the_paired_exact_test():
    suite = simulated_suite([make_case("c")])
    records = runs("c", "base", ["pass"] * 8) + runs("c", "cand", ["fail"] * 8)
    paired = GateConfig(baseline="base", candidate="cand", paired=True)
    comparison = summarize(records, suite, paired).comparison
    (case,) = comparison.cases
    assert case.paired and comparison.paired_cases == 1 and case.pair == (0, 0, 8, 0)
    assert case.p_value == pytest.approx(paired_exact_p_value(0, 0, 8, 0))
    assert case.interval == paired_exact_interval(0, 0, 8, 0, 0.95)


def test_shared_seeds_pair_runs_only_when_the_suite_declares_it():
    suite = simulated_suite([make_case("c")])
    records = runs("c", "base", ["pass"] * 8) + runs("c", "cand", ["fail"] * 8)
    (case,) = summarize(records, suite, CONFIG).comparison.cases
    assert not case.paired
    assert case.interval == exact_score_interval(0, 8, 8, 8, 0.95)


def test_identical_agents_are_never_called_regression():
    cases, records = _random_records(5, drop=0.0)
    mirrored = [r for r in records if r.key.agent == "base"]
    cand = [
        make_run(r.key.case_id, "cand", r.key.repeat, r.status, latency=r.latency_ms, cost=r.cost)
        for r in mirrored
    ]
    comparison = summarize(mirrored + cand, simulated_suite(cases), CONFIG).comparison
    assert comparison.overall.difference == 0
    assert comparison.overall.verdict in ("equivalent", "inconclusive")
    assert all(c.verdict in ("equivalent", "inconclusive") for c in comparison.cases)
    assert comparison.latency_ratio == 1.0


def test_clear_regression_is_explained_per_tag():
    cases = [make_case(f"c{i}", tags=["news"] if i < 20 else ["prices"]) for i in range(40)]
    records = []
    for case in cases:
        records += runs(case.id, "base", ["pass"] * 5)
        cand = ["fail"] * 5 if case.tags == ["news"] else ["pass"] * 5
        records += runs(case.id, "cand", cand, seed=None)
    comparison = summarize(records, simulated_suite(cases), CONFIG).comparison
    tags = {t.group: t for t in comparison.tags}
    assert tags["news"].verdict == "regression"
    assert tags["news"].explanation.startswith("candidate lost 1.00")
    assert "regression; significant after correcting for 2 tags" in tags["news"].explanation
    assert "on tag news, on these 20 cases" in tags["news"].explanation
    # On these 20 cases, 100 passing runs per agent show the two within 0.05 of each other.
    assert tags["prices"].difference == 0
    assert tags["prices"].verdict == "equivalent"
    assert comparison.overall.verdict == "regression"
    assert tags["news"].p_adjusted <= 1
    # As a sample of tasks, 20 all-pass cases bound each rate only to about [0.83, 1]: not
    # enough to claim equivalence within 0.05 on tasks like these.
    tasks = replace(CONFIG, estimand="tasks")
    sampled = {
        t.group: t for t in summarize(records, simulated_suite(cases), tasks).comparison.tags
    }
    assert sampled["prices"].verdict == "inconclusive"
    assert "on tag news, on tasks like these" in sampled["news"].explanation


def test_insufficient_data_and_missing_agent_warning():
    suite = simulated_suite([make_case("a"), make_case("b"), make_case("not-selected")])
    records = [make_run("a", "base", i, "error", kind="infra") for i in range(2)]
    records += runs("a", "cand", ["pass"]) + runs("b", "base", ["pass"])
    config = replace(CONFIG, exclude_errors=["infra"])
    comparison = summarize(records, suite, config).comparison
    assert comparison.overall.verdict == "insufficient data"
    assert comparison.cases[0].verdict == "insufficient data"
    assert [w for w in comparison.warnings if "only one agent" in w] == [
        "1 case(s) were run by only one agent and are left out of the comparison: b"
    ]


def test_min_repeats_marks_cases_insufficient():
    suite = simulated_suite([make_case("c")])
    records = runs("c", "base", ["pass"] * 2) + runs("c", "cand", ["fail"] * 2, seed=9)
    config = GateConfig(baseline="base", candidate="cand", min_repeats=3)
    (case,) = summarize(records, suite, config).comparison.cases
    assert case.verdict == "insufficient data"


def test_policy_violations_cost_and_latency():
    suite = simulated_suite([make_case("a"), make_case("b")], agents=("cand",))
    records = runs("a", "cand", ["pass", "fail"], cost=0.5, latency=10.0)
    records += runs("b", "cand", ["fail"], cost=1.0, latency=1000.0, violation=True)
    summary = summarize(records, suite, GateConfig(candidate="cand"))
    (agent,) = summary.agents
    assert agent.policy_violations == 1
    assert agent.total_cost == pytest.approx(2.0)
    assert agent.cost_per_accepted == pytest.approx(2.0)
    assert agent.p95_latency_ms == 1000.0
    by_case = {c.case_id: c for c in summary.case_stats}
    assert by_case["b"].policy_violations == 1 and by_case["a"].mean_cost == 0.5


def _thirty_cases_one_improved(seed: int):
    rng = np.random.default_rng(seed)
    cases = tagged_cases(30)
    rates = case_rates(rng, 30, 0.7, 0.3)
    base = rng.random((30, 5)) < rates[:, None]
    cand = base.copy()
    base[0], cand[0] = [False] * 5, [True] * 4 + [False]
    records = [*outcome_records("base", base), *outcome_records("cand", cand)]
    return summarize(records, simulated_suite(cases), CONFIG).comparison


def test_a_case_significant_alone_shows_an_interval_that_agrees_with_its_verdict():
    """Before: "+80 [+19, +96] inconclusive", an unadjusted Newcombe interval next to a
    verdict from Boschloo and BH."""
    comparison = _thirty_cases_one_improved(12)
    case = comparison.cases[0]
    assert case.difference == pytest.approx(0.8)
    assert case.p_value == pytest.approx(exact_score_p_value(4, 5, 0, 5))
    assert case.p_value <= 0.05 < case.p_adjusted
    assert case.verdict == "inconclusive"
    assert case.interval[0] <= 0 <= case.interval[1]
    assert case.level == pytest.approx(1 - 0.05 / 30)
    assert case.interval == exact_score_interval(4, 5, 0, 5, case.level)
    assert case.reason == (
        f"significant alone (p = {case.p_value:.3g}) but not after correcting for 30 cases "
        f"(q = {case.p_adjusted:.3g})"
    )
    wide = next(c for c in comparison.cases if c.p_value is not None and c.p_value > 0.05)
    assert wide.reason.startswith("interval too wide to tell (p = ")


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.floats(-0.4, 0.2), st.sampled_from([0.0, 0.05]))
def test_every_case_and_tag_interval_agrees_with_its_correction_and_verdict(seed, shift, margin):
    rng = np.random.default_rng(seed)
    rates = case_rates(rng, 20, 0.6, 0.3)
    base = rng.random((20, 4)) < rates[:, None]
    cand = rng.random((20, 4)) < np.clip(rates + shift, 0, 1)[:, None]
    records = [*outcome_records("base", base), *outcome_records("cand", cand)]
    config = replace(CONFIG, margin=margin)
    comparison = summarize(records, simulated_suite(tagged_cases(20, tags=4)), config).comparison
    alpha = 0.05
    q_values = [c.p_adjusted for c in comparison.cases]
    level = fcr_confidence(q_values, alpha)
    for case in comparison.cases:
        low, high = case.interval
        assert case.level == pytest.approx(level)
        excludes = low > 1e-4 or high < -1e-4
        if abs(low) > 1e-4 and abs(high) > 1e-4:
            assert excludes == (case.p_adjusted <= alpha)
        expected = (
            "regression"
            if high < -margin
            else "improvement"
            if low > margin
            else "equivalent"
            if low >= -0.05 and high <= 0.05
            else "inconclusive"
        )
        assert case.verdict == expected
    tags = comparison.tags
    p_values = [t.p_value for t in tags]
    for tag, q in zip(tags, holm(p_values), strict=True):
        assert tag.p_adjusted == pytest.approx(q)
        assert tag.level == pytest.approx(agreeing_confidence(tag.p_value, q, alpha))
        low, high = tag.interval
        if abs(low) > 1e-9 and abs(high) > 1e-9:
            assert (low > 0 or high < 0) == (q <= alpha)
