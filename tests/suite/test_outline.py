"""The suite outline stored with each evaluation round-trips through JSON unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.model.gates import GateConfig
from evals.model.suite import SuiteOutline
from evals.suite import load_suite

DEMO = Path(__file__).resolve().parents[2] / "cases" / "trading-research"

fractions = st.none() | st.floats(0, 1)
thresholds = st.builds(
    GateConfig,
    baseline=st.none() | st.text(max_size=5),
    confidence=st.floats(0.5, 0.999),
    min_pass_rate=fractions,
    margin=st.floats(0, 1),
    max_cost_ratio=st.none() | st.floats(1, 5),
    min_repeats=st.integers(1, 20),
    tags=st.none() | st.lists(st.text(max_size=4), max_size=3),
    per_tag=st.dictionaries(
        st.text(max_size=4), st.fixed_dictionaries({"min_pass_rate": fractions})
    ),
)


overrides = st.fixed_dictionaries(
    {},
    optional={
        "margin": st.floats(0, 1),
        "min_pass_rate": fractions,
        "on_undetermined": st.sampled_from(["fail", "warn", "pass"]),
        "repeat": st.integers(1, 20),
        "exclude_errors": st.lists(st.sampled_from(["infra", "timeout"]), max_size=2),
    },
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(thresholds, st.dictionaries(st.sampled_from(["pr", "nightly", "release"]), overrides))
def test_gate_thresholds_survive_json(config: GateConfig, environments: dict) -> None:
    config.environments = environments

    again = GateConfig.from_dict(json.loads(json.dumps(config.to_dict())))

    assert again == config
    for name in ("pr", "nightly", "release"):
        assert again.for_environment(name) == config.for_environment(name)


def test_the_demo_suite_outline_survives_json() -> None:
    suite = load_suite(str(DEMO))
    outline = suite.outline()

    again = SuiteOutline.from_dict(json.loads(json.dumps(outline.to_dict())))

    assert again == outline
    assert again.gates == suite.gates
    assert [c.id for c in again.cases] == [c.id for c in suite.cases]
    assert [(c.tags, c.priority, c.why_it_exists) for c in again.cases] == [
        (c.tags, c.priority, c.why_it_exists) for c in suite.cases
    ]
    assert all(not c.vars and not c.asserts for c in again.cases)
