"""A gate is one object: decide, planning and adaptive runs read the same declarations, so
planning cannot split the budget differently from the decision, and a gate added to the
catalog is decided, planned and given its cases without touching anything else."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.gates import catalog
from evals.gates.adaptive import AdaptiveState, advance
from evals.gates.catalog import GATES, gate_cases, gate_of, planned_gate_count, planned_test_split
from evals.gates.families import Hypothesis, Levels, gate_result, judge_family
from evals.gates.registry import Evidence, Gate, Scope, tagged_cases
from evals.model.gates import GateConfig
from evals.model.summary import GateResult
from evals.pipeline.evaluation import analyse
from validation.beta_binomial import outcome_records, simulated_suite
from validation.beta_binomial import tagged_cases as cases_of

CASES = cases_of(12, tags=3, p0=(0, 5))

thresholds = st.fixed_dictionaries(
    {},
    optional={
        "min_pass_rate": st.sampled_from([0.3, 0.6]),
        "max_error_rate": st.sampled_from([None, 0.1]),
        "max_flake_rate": st.just(0.6),
        "max_cost_per_accepted": st.just(5.0),
        "max_regression": st.sampled_from([0.0, 0.1]),
        "block_p0_regressions": st.booleans(),
        "zero_policy_violations": st.booleans(),
        "min_repeats": st.sampled_from([1, 3]),
        "max_latency_ratio": st.just(3.0),
        "max_cost_ratio": st.just(3.0),
    },
)
per_tag = st.dictionaries(
    st.sampled_from(["t0", "t1", "t2", "absent"]),
    st.fixed_dictionaries(
        {},
        optional={"max_regression": st.just(0.2), "min_pass_rate": st.just(0.1)},
    ),
    max_size=3,
)


def _records(seed: int, agents: tuple[str, ...]) -> list:
    rng = np.random.default_rng(seed)
    records = []
    for agent in agents:
        outcomes = rng.random((len(CASES), 4)) < 0.7
        for record in outcome_records(agent, outcomes):
            record.response.cost = 0.01
            records.append(record)
    return records


def _gate_names(rows: list[GateResult]) -> set[str]:
    named = {gate_of(row.name) for row in rows if row.share is not None}
    assert None not in named
    return {gate.name for gate in named if gate is not None}


@pytest.mark.slow
@settings(max_examples=40)
@given(values=thresholds, tags=per_tag, compared=st.booleans(), seed=st.integers(0, 99))
def test_planning_counts_and_splits_what_decide_decides(values, tags, compared, seed):
    agents = ("base", "cand") if compared else ("cand",)
    suite = simulated_suite(CASES, agents)
    pairs = {"baseline": "base", "candidate": "cand"} if compared else {"candidate": "cand"}
    suite.gates = GateConfig(**pairs, **values, per_tag=tags)
    _, report = analyse(suite, _records(seed, agents), suite.gates, None)
    spent = _gate_names(report.gates)
    assert planned_gate_count(suite, None) == max(len(spent), 1)
    shares = {row.share for row in report.gates if row.share is not None}
    assert len({round(s, 15) for s in shares}) <= 1, "equal weights give equal shares"
    finest = min(
        (
            row.share / sum(1 for other in report.gates if gate_of(other.name) == gate_of(row.name))
            for row in report.gates
            if row.share is not None
        ),
        default=0.05 / 2,
    )
    # The finest test the sequential designs are computed for is no coarser than the
    # finest one decide makes.
    assert 0.05 / planned_test_split(suite, None) <= finest * (1 + 1e-9)


def test_every_row_of_the_gate_table_belongs_to_one_declared_gate():
    suite = simulated_suite(CASES)
    suite.gates = GateConfig(
        baseline="base",
        candidate="cand",
        min_pass_rate=0.5,
        max_flake_rate=0.5,
        max_cost_per_accepted=1.0,
        max_cost_ratio=2.0,
        max_latency_ratio=2.0,
        min_repeats=2,
        per_tag={"t1": {"max_regression": 0.1, "min_pass_rate": 0.2}},
    )
    _, report = analyse(suite, _records(1, ("base", "cand")), suite.gates, None)
    for row in report.gates:
        owners = [gate for gate in GATES if gate.owns(row.name)]
        assert len(owners) == 1, row.name
    assert len({gate.name for gate in GATES}) == len(GATES)


def test_gate_cases_follow_each_gates_declaration():
    every = {c.id for c in CASES}
    assert gate_cases("regression", CASES) == every
    assert gate_cases("regression[t1]", CASES) == {c.id for c in CASES if "t1" in c.tags}
    assert gate_cases("p0_regressions", CASES) == {"c0", "c5"}
    assert gate_cases("policy", CASES) == frozenset()
    assert gate_cases("judge_accuracy", CASES) == frozenset()


def _seen_limit(level: float, side: str) -> float:
    return 0.5 + (level - 0.5) * (1 if side == "upper" else -1)


def _decide_seen(evidence: Evidence, levels: Levels) -> list[GateResult]:
    rows = []
    for tag in sorted(t for t in evidence.config.per_tag if t != "absent"):
        hypothesis = Hypothesis(label=tag, measured=0.5, limit=_seen_limit, threshold=0.1)
        (judged,) = judge_family([hypothesis], levels)
        rows.append(gate_result(f"seen[{tag}]", judged, levels, "every tag seen"))
    return rows


def _seen_family(scope: Scope) -> list[str] | None:
    return sorted(t for t in scope.config.per_tag if t in scope.tags) or None


SEEN = Gate(
    name="seen[tag]",
    keys=(),
    statistical=True,
    family=_seen_family,
    decide=_decide_seen,
    reads=tagged_cases,
    weight=2.0,
)


def test_a_gate_added_to_the_catalog_is_decided_planned_and_given_its_cases(monkeypatch):
    monkeypatch.setattr(catalog, "GATES", (*GATES, SEEN))
    suite = simulated_suite(CASES)
    suite.gates = GateConfig(
        baseline="base", candidate="cand", per_tag={"t0": {}, "t2": {}}, max_error_rate=None
    )
    _, report = analyse(suite, _records(2, ("base", "cand")), suite.gates, None)
    seen = [row for row in report.gates if row.name.startswith("seen[")]
    assert [row.name for row in seen] == ["seen[t0]", "seen[t2]"]
    shares = {row.name.split("[")[0]: row.share for row in report.gates if row.share}
    # Its weight 2 against the regression and P0 gates' 1 each: half the budget.
    assert shares["seen"] == pytest.approx(0.025)
    assert planned_gate_count(suite, None) == 3
    open_seen = replace(report, gates=[replace(row, status="undetermined") for row in seen])
    state = advance(AdaptiveState(), open_seen, CASES, 1)
    assert state.active == {c.id for c in CASES if {"t0", "t2"} & set(c.tags)}
