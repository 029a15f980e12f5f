"""The policy gate's reason says where the first violation of each agent happened: the
case, the repeat and (in a conversation) the turn, so a failed build names what to read."""

from __future__ import annotations

import dataclasses

import numpy as np

from evals.model.gates import GateConfig
from evals.model.results import Grade
from evals.pipeline.evaluation import analyse
from validation.beta_binomial import outcome_records, simulated_suite, tagged_cases

CONFIG = GateConfig(baseline="base", candidate="cand", zero_policy_violations=True)
UNCONFIRMED = "turn 3: [approval] refund_order: write call without the user's confirmation"


def _violating(records, where):
    """`records` with a policy violation in each (case index, repeat) of `where`."""
    changed = []
    for record in records:
        if (record.case_index, record.key.repeat) in where:
            grade = Grade(False, 0.0, f"Policy violation: {UNCONFIRMED}", policy_violation=True)
            record = dataclasses.replace(record, status="fail", grade=grade)
        changed.append(record)
    return changed


def test_the_policy_gate_names_the_first_violations_case_repeat_and_turn():
    outcomes = np.ones((6, 4), dtype=bool)
    base = outcome_records("base", outcomes)
    # the violations lie in cases 4 and 2; case 2 comes first in the suite, at repeat 3
    cand = _violating(outcome_records("cand", outcomes), {(4, 0), (2, 2), (2, 3)})
    summary, report = analyse(simulated_suite(tagged_cases(6)), base + cand, CONFIG, None)
    (policy,) = [g for g in report.gates if g.name == "policy"]
    assert policy.status == "fail"
    assert policy.reason.startswith("3 policy violation(s) by cand (cand in 2 case(s), ")
    assert f"first c2 (repeat 3): {UNCONFIRMED}" in policy.reason
    assert "Policy violation: " not in policy.reason
    (stats,) = [a for a in summary.agents if a.agent == "cand" and a.group == "suite"]
    assert stats.violation_cases == 2 and stats.policy_violations == 3


def test_without_violations_the_reason_says_so_and_names_no_case():
    outcomes = np.ones((3, 2), dtype=bool)
    records = outcome_records("base", outcomes) + outcome_records("cand", outcomes)
    _, report = analyse(simulated_suite(tagged_cases(3)), records, CONFIG, None)
    (policy,) = [g for g in report.gates if g.name == "policy"]
    assert policy.status == "pass"
    assert policy.reason == "no policy violations by cand"
