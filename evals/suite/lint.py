"""Warnings about a suite that loads but probably does not do what its author meant.

Unknown keys are refused at load (`evals.suite.keys`); what is left are the things a suite
may say on purpose: a promptfoo combinator this promptfoo version runs as an error row, a
case of a comparison that does not say why it exists.
"""

from __future__ import annotations

from evals.graders.registry import COMBINATOR_HINT, COMBINATORS
from evals.model.suite import Suite


def lint_suite(suite: Suite) -> list[str]:
    """Combinators promptfoo runs as error rows, and cases missing the fields gates rely on."""
    warnings: list[str] = []
    raw_tests = suite.raw.get("tests")
    if isinstance(raw_tests, list):
        for number, test in enumerate(raw_tests, start=1):
            if not isinstance(test, dict):
                continue
            for item in test.get("assert") or []:
                if isinstance(item, dict) and str(item.get("type")) in COMBINATORS:
                    warnings.append(f"test #{number}: {COMBINATOR_HINT}")
    if len(suite.providers) >= 2:
        for case in suite.cases:
            if not case.why_it_exists:
                warnings.append(f"case {case.id!r} has no metadata.why_it_exists")
    return warnings
