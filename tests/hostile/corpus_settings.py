"""More hostile suite settings: numbers, section shapes and the harness's own blocks.

Variants of the suite cases in corpus_suites.py, written against the rule rather than the
first examples: every number is range-checked, every section shape-checked, every block's
keys known, each at the offending line with a fix.
"""

from __future__ import annotations

from tests.hostile.builders import GOOD_AGENT, correct_runs
from tests.hostile.corpus_suites import HEAD, TEST, bad_suite, with_gates, with_options, with_test
from tests.hostile.harness import Case, UsageError

HUGE = "9" * 5000

CASES = [
    Case(
        id="listed-plan-of-a-billion-runs",
        category="suites",
        files={
            "suite.yaml": HEAD + TEST.replace("value: ok}", "value: ok}, {type: max-score}"),
            "good.py": GOOD_AGENT,
        },
        expect=UsageError(("suite.yaml", "repeat", "1,000,000,000 runs")),
        argv=("run", "suite.yaml", "--repeat", "1000000000"),
        mode="inprocess",
        limit_s=20.0,
    ),
    bad_suite("repeat-5000-digits", with_options(f"{{repeat: {HUGE}}}"), "repeat", "repeat"),
    bad_suite(
        "max-concurrency-text", with_options("{maxConcurrency: many}"), "maxConcurrency", "many"
    ),
    bad_suite("delay-boolean", with_options("{delay: true}"), "delay", "delay"),
    bad_suite(
        "evaluate-options-string",
        HEAD + "evaluateOptions: fast\n" + TEST,
        "evaluateOptions",
        "mapping",
    ),
    bad_suite(
        "provider-delay-nan",
        "prompts: ['{{q}}']\nproviders:\n  - {id: file://good.py, delay: .nan}\n" + TEST,
        "delay",
        "delay",
    ),
    bad_suite(
        "provider-options-string",
        "prompts: ['{{q}}']\nproviders:\n  - file://good.py: fast\n" + TEST,
        "fast",
        "mapping",
    ),
    bad_suite(
        "assert-threshold-infinite",
        with_test(
            "  - vars: {q: hi}\n    assert:\n      - {type: similar, value: ok, threshold: .inf}\n"
        ),
        "threshold",
        "threshold",
    ),
    bad_suite(
        "assert-config-list",
        with_test(
            "  - vars: {q: hi}\n    assert:\n      - {type: contains, value: ok, config: [a]}\n"
        ),
        "config",
        "config",
    ),
    bad_suite(
        "budget-assertion-negative",
        with_test(
            "  - vars: {q: hi}\n    assert:\n      - {type: budget, value: {max_steps: -1}}\n"
        ),
        "budget",
        "max_steps",
    ),
    bad_suite("env-value-list", HEAD + "env:\n  REGION: [eu, us]\n" + TEST, "REGION", "REGION"),
    bad_suite(
        "scenario-tests-string",
        HEAD + TEST + "scenarios:\n  - config: [{vars: {q: a}}]\n    tests: all\n",
        "tests: all",
        "tests",
    ),
    bad_suite(
        "default-test-assert-mapping",
        HEAD + "defaultTest:\n  assert: {type: contains, value: ok}\n" + TEST,
        "assert:",
        "list",
    ),
    bad_suite(
        "default-test-threshold-text",
        HEAD + "defaultTest:\n  threshold: most\n" + TEST,
        "threshold",
        "threshold",
    ),
    bad_suite(
        "gates-max-error-rate-above-one",
        with_gates("{max_error_rate: 1.5}"),
        "max_error_rate",
        "max_error_rate",
    ),
    bad_suite(
        "gates-per-tag-unknown-key",
        with_gates("{per_tag: {golden: {min_pass_rat: 0.5}}}"),
        "per_tag",
        "min_pass_rate",
    ),
    bad_suite(
        "gates-environment-unknown-key",
        with_gates("{environments: {nightly: {repet: 3}}}"),
        "environments",
        "repeat",
    ),
    bad_suite("gates-paired-number", with_gates("{paired: 1}"), "paired", "paired"),
    bad_suite(
        "budget-max-steps-fraction",
        HEAD + TEST + "budget: {max_steps: 2.5}\n",
        "budget",
        "max_steps",
    ),
    bad_suite(
        "prices-missing-output", HEAD + TEST + "prices: {m: {input: 1}}\n", "prices", "output"
    ),
    bad_suite("policy-unknown-key", HEAD + TEST + "policy: {dney: [rm]}\n", "policy", "deny"),
    bad_suite(
        "tools-parameters-string",
        HEAD + TEST + "tools:\n  - name: search\n    parameters: query\n",
        "- name: search",
        "parameters",
    ),
    bad_suite("trace-enabled-text", HEAD + TEST + "trace: {enabled: 'yes'}\n", "trace", "enabled"),
    Case(
        id="prompt-partial-tag-is-text",
        category="suites",
        files={
            "suite.yaml": "prompts: ['{{q}} costs {{']\nproviders: [{id: file://good.py}]\n" + TEST,
            "good.py": GOOD_AGENT,
        },
        expect=correct_runs("an unclosed {{ renders as text, as in promptfoo", 1),
    ),
]
