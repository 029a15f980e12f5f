"""Corpus cases that fail today, by root cause (see rootcauses.py for each cause).

Each entry turns its cases into strict xfails. A fix makes them pass, which strict xfail
reports as a failure: remove the fixed cases here (and the cause once it has none).
"""

from __future__ import annotations

KNOWN_FAILURES: dict[str, tuple[str, ...]] = {
    "extension-blocks": (
        "suites/budget-max-cost-negative",
        "suites/budget-max-cost-text",
        "suites/budget-unknown-key",
        "suites/budget-list",
        "suites/prices-negative",
        "suites/prices-text",
        "suites/tools-string",
        "suites/tools-effect-unknown",
        "suites/policy-list",
        "suites/policy-max-identical-negative",
        "suites/trace-redact-number",
        "suites/trace-string",
    ),
    "numbers": (
        "suites/repeat-zero",
        "suites/repeat-negative",
        "suites/repeat-fraction",
        "suites/repeat-boolean",
        "suites/max-concurrency-zero",
        "suites/max-concurrency-negative",
        "suites/timeout-negative",
        "suites/timeout-nan",
        "suites/timeout-infinite",
        "suites/delay-negative",
        "suites/test-threshold-nan",
        "suites/assert-weight-negative",
        "suites/assert-weight-nan",
        "suites/gates-max-cost-ratio-negative",
        "suites/gates-max-latency-ratio-infinite",
        "suites/gates-min-repeats-fraction",
        "suites/gates-min-repeats-text",
        "suites/gates-repeat-zero",
        "suites/gates-environment-repeat-negative",
        "suites/gates-confidence-one",
        "suites/gates-confidence-zero",
    ),
    "shapes": (
        "suites/env-list",
        "suites/env-string",
        "suites/env-nested-mapping",
        "suites/scenarios-string",
        "suites/scenarios-list-of-numbers",
        "suites/scenario-config-string",
        "suites/vars-string",
        "suites/vars-list",
        "suites/test-threshold-text",
        "suites/assert-weight-text",
        "suites/assert-threshold-text",
        "suites/assert-list-not-a-list",
        "suites/test-metadata-string",
        "suites/test-options-string",
        "suites/gates-boolean-as-text",
        "suites/gates-per-tag-number",
        "suites/gates-tags-mapping",
        "suites/provider-delay-text",
        "suites/provider-config-string",
        "suites/default-test-vars-number",
        "datasets/json-vars-not-mapping",
    ),
    "lines": (
        "suites/evaluate-options-list",
        "suites/gates-min-pass-rate-text",
        "suites/gates-list",
        "suites/prompts-number",
        "suites/prompt-template-unclosed",
        "suites/provider-labels-duplicate",
        "suites/default-test-list",
        "suites/suite-is-a-list",
        "datasets/json-invalid",
        "datasets/json-huge-integer-var",
    ),
}


def failing_cause(case_key: str) -> str | None:
    """The root cause a case (`category/id`) fails by today, if it does."""
    for cause, cases in KNOWN_FAILURES.items():
        if case_key in cases:
            return cause
    return None
