"""What the catalog reads of the grader modules' declarations is what importing them
registers; a suite imports only the modules of its types; promptfoo's CSV types are
promptfoo's own list."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import evals.graders.registry as registry
from evals.graders import catalog
from evals.model.errors import SuiteError
from evals.suite.csv_tests import promptfoo_types
from tests.tiers import promptfoo_cli


def test_the_catalog_reads_what_importing_the_grader_modules_registers() -> None:
    registry._load()

    assert catalog.declared() == registry._DECLARED
    assert {kind: g.__module__ for kind, g in registry._GRADERS.items()} == {
        kind: d.module for kind, d in catalog.declared().items()
    }
    assert catalog.value_checks() == {
        kind: check.__module__ for kind, check in registry._VALUE_CHECKS.items()
    }


def test_a_decorator_spread_over_lines_or_with_a_parenthesis_in_a_name_is_read() -> None:
    source = (
        "@register(\n"
        '    "acme:one",\n'
        '    "acme:(two)",  # a comment\n'
        '    layer="policy",\n'
        "    promptfoo=False,\n"
        ")\n"
        "def grade(ctx): ...\n"
    )
    call = catalog._call(source, 1)
    assert call is not None
    assert catalog._literals(call) == (
        ["acme:one", "acme:(two)"],
        {"layer": "policy", "promptfoo": False},
    )
    assert catalog._literals(catalog._call("@register(*NAMES, layer=LAYER)", 1)) is None


def test_every_layer_is_declared_where_the_type_is_registered() -> None:
    layers = {kind: d.layer for kind, d in catalog.declared().items()}
    assert layers["trajectory:tool-used"] == layers["tool-call-f1"] == "trajectory"
    assert layers["policy"] == layers["permission"] == layers["guardrails"] == "policy"
    assert layers["budget"] == layers["cost"] == layers["latency"] == "operational"
    assert layers["trace-complete"] == layers["trace-span-count"] == "trace"
    assert layers["contains"] == layers["llm-rubric"] == "final"


def test_registering_without_a_known_layer_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scorecard layer 'answer'"):
        registry.register("acme:x", layer="answer")  # type: ignore[arg-type]


def test_a_suite_loads_only_the_grader_modules_it_uses() -> None:
    script = (
        "import sys\n"
        "from evals.graders.registry import (\n"
        "    check_assertion_type, check_assertion_value, get_grader\n"
        ")\n"
        "check_assertion_type('not-contains')\n"
        "check_assertion_value('regex', '^a')\n"
        "assert get_grader('contains') is not None\n"
        "print(sorted(m for m in sys.modules if m.startswith('evals.graders.')))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout

    assert "evals.graders.output" in loaded
    for unused in (
        "evals.graders.text_metrics",
        "evals.graders.sql",
        "evals.graders.markup",
        "evals.graders.webhook",
    ):
        assert unused not in loaded


def test_an_unknown_type_is_still_reported_with_a_suggestion() -> None:
    with pytest.raises(SuiteError, match="did you mean 'levenshtein'"):
        registry.check_assertion_type("levenstein")


@pytest.mark.promptfoo
def test_the_csv_types_are_promptfoos_own_list() -> None:
    cli = promptfoo_cli()
    assert cli is not None
    package = cli.resolve().parents[2]
    script = (
        f"console.log(JSON.stringify(require({str(package)!r}).BaseAssertionTypesSchema.options))"
    )
    listed = subprocess.run(
        ["node", "-e", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert promptfoo_types() == sorted(json.loads(listed))
