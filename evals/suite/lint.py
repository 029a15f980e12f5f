"""Warnings about a suite that loads but probably does not do what its author meant."""

from __future__ import annotations

from evals.graders.registry import COMBINATOR_HINT, COMBINATORS
from evals.model.suite import Suite
from evals.suite.loader import KNOWN_TOP_LEVEL

_TEST_KEYS = {
    "description",
    "vars",
    "assert",
    "threshold",
    "metadata",
    "options",
    "provider",
    "providers",
    "prompts",
    "providerOutput",
    "assertScoringFunction",
}
_ASSERT_KEYS = {
    "type",
    "value",
    "threshold",
    "weight",
    "metric",
    "provider",
    "transform",
    "config",
    "rubricPrompt",
    "contextTransform",
    "turn",
}


def lint_suite(suite: Suite) -> list[str]:
    """Keys promptfoo would silently drop, and cases missing the fields gates rely on."""
    warnings: list[str] = []
    for key in suite.raw:
        if key not in KNOWN_TOP_LEVEL:
            warnings.append(f"top-level key {key!r} is ignored by evals and by promptfoo")
    raw_tests = suite.raw.get("tests")
    if isinstance(raw_tests, list):
        for number, test in enumerate(raw_tests, start=1):
            if not isinstance(test, dict):
                continue
            for key in test:
                if key not in _TEST_KEYS:
                    warnings.append(f"test #{number}: key {key!r} is silently dropped by promptfoo")
            for item in test.get("assert") or []:
                if isinstance(item, dict):
                    if str(item.get("type")) in COMBINATORS:
                        warnings.append(f"test #{number}: {COMBINATOR_HINT}")
                        continue
                    for key in item:
                        if key not in _ASSERT_KEYS:
                            warnings.append(
                                f"test #{number}: assertion key {key!r} "
                                "is silently dropped by promptfoo"
                            )
    if len(suite.providers) >= 2:
        for case in suite.cases:
            if not case.why_it_exists:
                warnings.append(f"case {case.id!r} has no metadata.why_it_exists")
    return warnings
