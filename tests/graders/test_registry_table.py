"""The registry's table of which module registers which assertion type matches the modules."""

from __future__ import annotations

import subprocess
import sys

import pytest

import evals.graders.registry as registry
from evals.model.errors import SuiteError


def test_the_table_names_the_module_that_registers_each_type() -> None:
    registry._load()
    registered = {kind: grader.__module__ for kind, grader in registry._GRADERS.items()}
    for kind, check in registry._VALUE_CHECKS.items():
        registered.setdefault(kind, check.__module__)

    assert registered == registry._MODULE_OF_TYPE


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
