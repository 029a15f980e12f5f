"""summarize() on hand-built run records."""

from __future__ import annotations

import random

import pytest

from evals.analysis.summarize import summarize
from evals.model.gates import GateConfig
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Case
from evals.stats import newcombe_interval, wilson_interval
from validation.beta_binomial import simulated_suite


def make_case(case_id: str, tags=(), priority=None) -> Case:
    metadata = {"tags": list(tags)}
    if priority:
        metadata["priority"] = priority
    return Case(index=0, id=case_id, description=case_id, vars={}, asserts=[], metadata=metadata)


def make_run(
    case_id, agent, repeat, status, *, seed=None, cost=0.01, latency=100.0, violation=False
):
    passed = status == "pass"
    grade = (
        None if status == "error" else Grade(passed, float(passed), "", policy_violation=violation)
    )
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
        latency_ms=latency,
        metadata={"shared_seed": repeat if seed is None else seed},
    )


def runs(case_id, agent, outcomes, **kwargs):
    return [make_run(case_id, agent, i, s, **kwargs) for i, s in enumerate(outcomes)]


CONFIG = GateConfig(baseline="base", candidate="cand")


def test_case_stats_keep_errors_apart():
    suite = simulated_suite([make_case("c1")], agents=("cand",))
    records = runs("c1", "cand", ["pass", "pass", "fail", "error"])
    summary = summarize(records, suite, GateConfig(candidate="cand"))
    (stats,) = summary.case_stats
    assert (stats.runs, stats.passes, stats.fails, stats.errors) == (4, 2, 1, 1)
    assert stats.pass_rate == pytest.approx(2 / 3)
    assert stats.interval == wilson_interval(2, 3)
    assert stats.flake == pytest.approx(2 * 2 * 1 / (3 * 2))
    assert stats.pass_hat_k == 0.0
    assert summary.comparison is None


def test_suite_rate_is_mean_of_case_rates_not_run_rate():
    suite = simulated_suite([make_case("a"), make_case("b")], agents=("cand",))
    records = runs("a", "cand", ["pass"] * 9 + ["fail"]) + runs("b", "cand", ["fail", "pass"])
    (agent,) = summarize(records, suite, GateConfig(candidate="cand")).agents
    assert agent.pass_rate == pytest.approx((0.9 + 0.5) / 2)
    assert agent.run_pass_rate == pytest.approx(10 / 12)
    assert agent.interval[0] <= agent.pass_rate <= agent.interval[1]
    assert agent.cases == 2 and agent.runs == 12
    assert agent.k == 2
    assert agent.flake_rate == 1.0


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


def test_unpaired_case_uses_newcombe_and_boschloo():
    suite = simulated_suite([make_case("c")])
    records = runs("c", "base", ["pass"] * 6, seed=1) + [
        make_run("c", "cand", i, "fail", seed=100 + i) for i in range(6)
    ]
    (case,) = summarize(records, suite, CONFIG).comparison.cases
    assert not case.paired
    assert case.difference == -1.0
    assert case.interval == newcombe_interval(0, 6, 6, 6)
    assert case.p_value < 0.01
    assert case.verdict == "regression"


def test_paired_runs_use_mcnemar():
    suite = simulated_suite([make_case("c")])
    records = runs("c", "base", ["pass"] * 8) + runs("c", "cand", ["fail"] * 8)
    paired = GateConfig(baseline="base", candidate="cand", paired=True)
    comparison = summarize(records, suite, paired).comparison
    (case,) = comparison.cases
    assert case.paired and comparison.paired_cases == 1
    assert case.p_value == pytest.approx(1 / 2**8)


def test_shared_seeds_pair_runs_only_when_the_suite_declares_it():
    suite = simulated_suite([make_case("c")])
    records = runs("c", "base", ["pass"] * 8) + runs("c", "cand", ["fail"] * 8)
    (case,) = summarize(records, suite, CONFIG).comparison.cases
    assert not case.paired
    assert case.interval == newcombe_interval(0, 8, 8, 8)


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
    assert "regression, significant after correction" in tags["news"].explanation
    # 20 all-pass cases per agent bound each rate only to about [0.83, 1]: not enough
    # to claim equivalence within 0.05, and certainly no change to report.
    assert tags["prices"].difference == 0
    assert tags["prices"].verdict == "inconclusive"
    assert comparison.overall.verdict == "regression"
    assert tags["news"].p_adjusted <= 1


def test_insufficient_data_and_missing_agent_warning():
    suite = simulated_suite([make_case("a"), make_case("b"), make_case("not-selected")])
    records = runs("a", "base", ["error", "error"]) + runs("a", "cand", ["pass"])
    records += runs("b", "base", ["pass"])
    comparison = summarize(records, suite, CONFIG).comparison
    assert comparison.overall.verdict == "insufficient data"
    assert comparison.cases[0].verdict == "insufficient data"
    assert [w for w in comparison.warnings if "only one agent" in w] == [
        "1 case(s) were run by only one agent and are left out: b"
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
