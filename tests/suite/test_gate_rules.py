"""Each key of the `gates:` block is declared once: its `GateConfig` field carries its rule,
the loader checks every key by that rule, and every built-in gate reads only such keys."""

from __future__ import annotations

import math
import textwrap
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from evals.gates.catalog import GATES
from evals.gates.registry import Gate
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig, KeyRule, key_rules
from evals.suite.gates import parse_gates
from evals.suite.loader import load_suite

RULES = key_rules()
AGENTS = ["old", "new"]


def test_every_key_the_block_accepts_is_a_field_with_a_rule() -> None:
    # `extra` holds plugin gates' keys; every other field is a key of the block.
    accepted = {f.name for f in fields(GateConfig)} - {"extra"}
    assert set(RULES) == accepted
    assert all(isinstance(rule, KeyRule) for rule in RULES.values())


@pytest.mark.parametrize("gate", GATES, ids=lambda gate: gate.name)
def test_every_builtin_gate_key_names_a_field_with_a_rule(gate: Gate) -> None:
    # A dotted key (`per_tag.min_pass_rate`) names a key inside a block key.
    for key in gate.keys:
        for part in key.split("."):
            assert part in RULES, f"{gate.name} reads {key!r}, which has no rule"


def test_a_plugin_key_is_not_taken_for_a_harness_key() -> None:
    with pytest.raises(SuiteError) as refused:
        parse_gates({"max_toxicity": 0.1}, AGENTS, file="s.yaml")
    assert "max_toxicity" in str(refused.value)


def _default(key: str) -> object:
    field = next(f for f in fields(GateConfig) if f.name == key)
    return field.default_factory() if field.default_factory is not MISSING else field.default


# Keys left unset (None) that a non-null rule refuses mean "the environment's default" or
# "not chosen yet" (an agent, a calibration file): they cannot be written as null.
WRITABLE_DEFAULTS = sorted(k for k in RULES if _default(k) is not None or RULES[k].nullable)


@pytest.mark.parametrize("key", WRITABLE_DEFAULTS)
def test_a_field_default_passes_its_own_rule(key: str) -> None:
    assert parse_gates({key: _default(key)}, AGENTS).value(key) == _default(key)


NUMBER_KEYS = sorted(k for k, rule in RULES.items() if rule.kind == "number")


@pytest.mark.parametrize("key", NUMBER_KEYS)
def test_a_number_key_refuses_a_value_out_of_its_bounds(key: str, tmp_path: Path) -> None:
    """A user's suite file with the key just below its low end (or above its high end) is
    refused at the key's line, with the rule's example in the fix."""
    bounds = RULES[key].bounds
    assert bounds is not None
    bad = bounds.low - 1 if bounds.low is not None else (bounds.high or 0) + 1
    assert not (math.isfinite(bad) and bounds.holds(bad))
    suite = tmp_path / "promptfooconfig.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""\
            providers:
              - id: file://agent.py
                label: old
              - id: file://agent.py
                label: new
            tests:
              - vars: {{q: hi}}
            gates:
              paired: false
              {key}: {bad}
            """
        )
    )
    (tmp_path / "agent.py").write_text("def call_api(prompt, options, context):\n    return {}\n")
    with pytest.raises(SuiteError) as refused:
        load_suite(suite)
    error = refused.value
    assert error.line == 10
    assert f"gates.{key} must be {bounds.describe()}" in error.message
    assert RULES[key].example in (error.fix or "")
