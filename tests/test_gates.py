"""decide() on hand-built summaries, and the fingerprint check."""

from __future__ import annotations

import pytest

from evals.gates.decide import check_comparable, decide
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.summary import (
    AgentStats,
    CaseAgentStats,
    CaseComparison,
    Comparison,
    GroupComparison,
    Summary,
)
from evals.suite.gates import parse_gates


def agent(name="cand", rate=0.8, interval=(0.7, 0.9), **kwargs) -> AgentStats:
    return AgentStats(
        agent=name,
        group="suite",
        cases=30,
        runs=150,
        passes=120,
        errors=0,
        pass_rate=rate,
        interval=interval,
        **kwargs,
    )


def case_stats(case_id, name, passes, runs, flake=None) -> CaseAgentStats:
    return CaseAgentStats(
        case_id=case_id,
        agent=name,
        runs=runs,
        passes=passes,
        fails=runs - passes,
        errors=0,
        pass_rate=passes / runs,
        interval=(0.0, 1.0),
        flake=flake,
    )


def group(interval, difference=-0.05, name="suite") -> GroupComparison:
    return GroupComparison(
        group=name,
        cases=30,
        baseline_rate=0.8,
        candidate_rate=0.8 + difference,
        difference=difference,
        interval=interval,
        verdict="inconclusive",
        explanation="candidate changed",
    )


def summary(agents=None, comparison=None, cases=None, tags=None) -> Summary:
    return Summary(
        suite_id="s",
        version=None,
        fingerprint="fp",
        confidence=0.95,
        case_stats=cases or [],
        agents=agents or [agent()],
        tags=tags or [],
        comparison=comparison,
    )


def comparison(overall, cases=(), tags=(), **kwargs) -> Comparison:
    return Comparison(
        baseline="base",
        candidate="cand",
        overall=overall,
        tags=list(tags),
        cases=list(cases),
        **kwargs,
    )


def gate(report, name):
    (result,) = [g for g in report.gates if g.name == name]
    return result


@pytest.mark.parametrize(
    ("interval", "status"),
    [((0.81, 0.9), "pass"), ((0.6, 0.79), "fail"), ((0.7, 0.9), "undetermined")],
)
def test_absolute_gate_reads_the_interval(interval, status):
    report = decide(
        summary([agent(interval=interval)]), GateConfig(candidate="cand", min_pass_rate=0.8), None
    )
    result = gate(report, "min_pass_rate")
    assert result.status == status
    assert result.threshold == 0.8 and result.interval == interval
    assert report.passed == (status != "fail")


@pytest.mark.parametrize(
    ("interval", "status"),
    [((-0.04, 0.02), "pass"), ((-0.2, -0.06), "fail"), ((-0.1, 0.01), "undetermined")],
)
def test_regression_gate_against_tolerated_loss(interval, status):
    config = GateConfig(baseline="base", candidate="cand", max_regression=0.05)
    report = decide(summary(comparison=comparison(group(interval))), config, None)
    result = gate(report, "regression")
    assert result.status == status and result.threshold == -0.05


def _case(priority, verdict):
    return CaseComparison(
        case_id=f"{priority}-{verdict}",
        description="",
        tags=[],
        priority=priority,
        baseline=case_stats("x", "base", 5, 5),
        candidate=case_stats("x", "cand", 0, 5),
        difference=-1.0,
        interval=(-1.0, -0.5),
        p_value=0.001,
        p_adjusted=0.01,
        verdict=verdict,
    )


def test_p0_regression_blocks_and_other_priorities_do_not():
    config = GateConfig(baseline="base", candidate="cand")
    blocked = decide(
        summary(comparison=comparison(group((-0.01, 0.01)), cases=[_case("P0", "regression")])),
        config,
        None,
    )
    assert gate(blocked, "p0_regressions").status == "fail"
    assert "P0-regression" in gate(blocked, "p0_regressions").reason
    assert not blocked.passed
    fine = decide(
        summary(
            comparison=comparison(
                group((-0.01, 0.01)), cases=[_case("P2", "regression"), _case("P0", "inconclusive")]
            )
        ),
        config,
        None,
    )
    assert gate(fine, "p0_regressions").status == "pass"


def test_policy_violation_fails_whatever_the_rate():
    report = decide(
        summary([agent(interval=(0.99, 1.0), policy_violations=1)]),
        GateConfig(candidate="cand", min_pass_rate=0.5),
        None,
    )
    assert gate(report, "min_pass_rate").status == "pass"
    assert gate(report, "policy").status == "fail"
    assert report.verdict == "fail"


def test_flake_gate():
    cases = [case_stats(f"c{i}", "cand", 5, 5, flake=0.0) for i in range(18)]
    cases += [case_stats("f1", "cand", 3, 5, flake=0.6), case_stats("f2", "cand", 2, 5, 0.6)]
    report = decide(summary(cases=cases), GateConfig(candidate="cand", max_flake_rate=0.03), None)
    result = gate(report, "flake_rate")
    assert result.measured == pytest.approx(0.1)
    assert result.status == "undetermined"
    strict = decide(
        summary(cases=cases * 20), GateConfig(candidate="cand", max_flake_rate=0.03), None
    )
    assert gate(strict, "flake_rate").status == "fail"


def test_cost_and_latency_ratio_gates():
    comp = comparison(
        group((-0.01, 0.01)),
        cost_ratio=1.5,
        cost_ratio_interval=(1.3, 1.7),
        latency_ratio=1.0,
        latency_ratio_interval=(0.9, 1.1),
    )
    config = GateConfig(
        baseline="base", candidate="cand", max_cost_ratio=1.2, max_latency_ratio=1.2
    )
    report = decide(summary(comparison=comp), config, None)
    assert gate(report, "cost_ratio").status == "fail"
    assert gate(report, "latency_ratio").status == "pass"


def test_cost_per_accepted_gate():
    rich = agent(cost_per_accepted=0.2, cost_per_accepted_interval=(0.15, 0.25))
    config = GateConfig(candidate="cand", max_cost_per_accepted=0.19)
    assert gate(decide(summary([rich]), config, None), "cost_per_accepted").status == (
        "undetermined"
    )
    broke = agent(total_cost=3.0)
    assert gate(decide(summary([broke]), config, None), "cost_per_accepted").status == "fail"


def test_environment_overrides_apply():
    config = parse_gates(
        {"min_pass_rate": 0.5, "environments": {"release": {"min_pass_rate": 0.95}}},
        ["cand"],
    )
    base = summary([agent(interval=(0.8, 0.9))])
    assert gate(decide(base, config, None), "min_pass_rate").status == "pass"
    assert gate(decide(base, config, "release"), "min_pass_rate").status == "fail"


def test_per_tag_thresholds():
    tags = [agent(interval=(0.3, 0.5))]
    tags[0].group = "news"
    config = GateConfig(candidate="cand", per_tag={"news": {"min_pass_rate": 0.6}})
    report = decide(summary(tags=tags), config, None)
    assert gate(report, "min_pass_rate[news]").status == "fail"


def test_equivalence_margin_is_parsed_as_a_fraction():
    assert parse_gates({"equivalence_margin": 0.02}, ["a"]).equivalence_margin == 0.02
    with pytest.raises(SuiteError, match="between 0 and 1"):
        parse_gates({"equivalence_margin": 2}, ["a"])


def test_check_comparable():
    assert check_comparable("abc", "abc", allow=False) == []
    warnings = check_comparable("abc", "abd", allow=True)
    assert len(warnings) == 1 and "differ" in warnings[0]
    with pytest.raises(SuiteError, match="not comparable"):
        check_comparable("abc", "abd", allow=False)
