"""Every setting of a suite is checked at load: a wrong type, a number out of range or an
unknown key of the harness's own blocks is a SuiteError at the offending line, with a fix."""

from __future__ import annotations

import pytest

from evals.suite import load_suite

HEAD = "prompts: ['{{q}}']\nproviders: [echo]\n"
TESTS = "tests:\n  - vars: {q: hi}\n"

# (suite text after HEAD, the text on the line the error must name, words of the message)
BAD = [
    ("evaluateOptions:\n  repeat: 0\n" + TESTS, "repeat: 0", "whole number >= 1"),
    ("evaluateOptions:\n  maxConcurrency: 1.5\n" + TESTS, "maxConcurrency", "whole number"),
    ("evaluateOptions:\n  timeoutMs: -.inf\n" + TESTS, "timeoutMs", "finite"),
    ("evaluateOptions:\n  delay: '10'\n" + TESTS, "delay", "the text '10'"),
    ("evaluateOptions: 3\n" + TESTS, "evaluateOptions", "mapping"),
    ("env:\n  A: 1\n  B: [x]\n" + TESTS, "B: [x]", "env.B"),
    (TESTS + "scenarios:\n  - config: [{vars: {a: 1}}, x]\n", "config:", "config #2"),
    (TESTS + "scenarios:\n  - tests:\n      - vars: 3\n", "vars: 3", "vars"),
    ("tests:\n  - vars: {q: hi}\n    options: [a]\n", "options: [a]", "options"),
    ("tests:\n  - vars: {q: hi}\n    threshold: .inf\n", "threshold", "threshold"),
    (
        "tests:\n  - vars: {q: hi}\n    assert:\n      - type: contains\n        value: x\n"
        "        weight: true\n",
        "weight: true",
        "weight",
    ),
    (
        "tests:\n  - vars: {q: hi}\n    assert:\n      - {type: contains, value: x, config: 1}\n",
        "config: 1",
        "config",
    ),
    (
        "tests:\n  - vars: {q: hi}\n    assert:\n      - type: assert-set\n        assert:\n"
        "          - {type: contains, value: a, weight: -1}\n",
        "weight: -1",
        ">= 0",
    ),
    (
        "tests:\n  - vars: {q: hi}\n    assert:\n      - type: assert-set\n        assert: x\n",
        "assert: x",
        "list",
    ),
    ("defaultTest:\n  metadata: [P0]\n" + TESTS, "metadata: [P0]", "defaultTest.metadata"),
    ("defaultTest: text\n" + TESTS, "defaultTest", "mapping"),
    (TESTS + "gates:\n  max_error_rate: 1.5\n", "max_error_rate", "between 0 and 1"),
    (TESTS + "gates:\n  min_repeats: 0\n", "min_repeats", ">= 1"),
    (TESTS + "gates:\n  paired: 'true'\n", "paired", "true or false"),
    (TESTS + "gates:\n  tags: [{a: 1}]\n", "tags", "list of names"),
    (TESTS + "gates:\n  per_tag:\n    news: {min_pass_rate: 2}\n", "news", "per_tag.news"),
    (TESTS + "gates:\n  per_tag:\n    news: {min_pass_rat: 0.5}\n", "news", "min_pass_rate"),
    (TESTS + "gates:\n  environments:\n    nightly: 5\n", "nightly", "environments.nightly"),
    (TESTS + "gates:\n  on_undetermined: maybe\n", "on_undetermined", "warn"),
    (TESTS + "budget:\n  max_steps: 2.5\n", "max_steps", "whole number"),
    (TESTS + "budget:\n  max_latency_ms: .nan\n", "max_latency_ms", "NaN"),
    (TESTS + "budget:\n  stop_reason: {a: 1}\n", "stop_reason", "reason"),
    (TESTS + "prices:\n  m: {input: 1}\n", "m: {input: 1}", "output"),
    (TESTS + "prices:\n  m: {input: 1, output: 2, cached: 3}\n", "m:", "cached"),
    (TESTS + "tools:\n  - name: a\n  - name: b\n    parameters: 5\n", "- name: b", "parameters"),
    (TESTS + "policy:\n  deny: 5\n", "deny", "names"),
    (TESTS + "policy:\n  forbidden_patterns: [sql]\n", "forbidden_patterns", "raw_sql"),
    (TESTS + "policy:\n  patterns: ['(']\n", "patterns", "regular expression"),
    (TESTS + "policy:\n  max_identical_calls: 0\n", "max_identical_calls", ">= 1"),
    (TESTS + "trace:\n  enabled: 1\n", "enabled", "true or false"),
    (TESTS + "limits:\n  echo: {requests_per_minute: .nan}\n", "requests_per", "NaN"),
    (TESTS + "trace:\n  redcat: [a]\n", "redcat", "redact"),
    ("prompts: [{label: b}]\nproviders: [echo]\n" + TESTS, "prompts", "prompt"),
    ("nunjucksFilters: 5\n" + TESTS, "nunjucksFilters", "filter"),
    ("tests: 5\n", "tests", "list"),
    (TESTS + "derivedMetrics: 5\n", "derivedMetrics", "derivedMetrics"),
    ("prompts: ['{{q}}']\nproviders: 5\n" + TESTS, "providers", "provider"),
    ("prompts: ['{{q}}']\nproviders:\n  - {echo: fast}\n" + TESTS, "echo: fast", "mapping"),
    ("prompts: ['{{q}}']\nproviders:\n  - {id: echo, delay: -1}\n" + TESTS, "delay", ">= 0"),
]


@pytest.mark.parametrize(("text", "at", "words"), BAD, ids=[b[1] + "/" + b[2] for b in BAD])
def test_a_bad_setting_is_refused_at_its_line_with_a_fix(text, at, words, write_suite, suite_error):
    suite = text if text.startswith("prompts") else HEAD + text
    path = write_suite(suite)
    error = suite_error(path)
    expected = next(n for n, line in enumerate(suite.splitlines(), 1) if at in line)
    assert error.file == str(path)
    assert error.line == expected, error.render()
    assert words in error.render(), error.render()
    assert error.fix, error.render()


def test_a_suite_that_is_a_list_is_refused_at_its_first_line(write_suite, suite_error):
    error = suite_error(write_suite("# a comment\n- prompts: [x]\n"))
    assert error.line == 2
    assert "mapping, not a list" in error.message


def test_duplicate_labels_name_the_second_provider(write_suite, suite_error):
    error = suite_error(
        write_suite(
            HEAD.replace("[echo]", "\n  - {id: echo, label: a}\n  - {id: echo, label: a}") + TESTS
        )
    )
    assert error.line == 4
    assert "'a'" in error.message


def test_well_formed_blocks_load_with_their_values(write_suite):
    suite = load_suite(
        write_suite(
            HEAD
            + TESTS
            + "evaluateOptions: {repeat: 3.0, maxConcurrency: 2, timeoutMs: 0, delay: 5}\n"
            + "env: {A: 1, B: text, C: true}\n"
            + "budget: {max_steps: 6, max_cost: 0.08, stop_reason: [done], model: m}\n"
            + "prices: {m: {prompt: 1, completion: 2}}\n"
            + "tools: {send: {effect: send}}\n"
            + "policy: {deny: rm, patterns: {secret: 'sk-\\w+'}, max_identical_calls: null}\n"
            + "trace: {enabled: false, redact: ['*.email']}\n"
            + "gates: {tags: smoke, min_repeats: 2, per_tag: {news: {min_pass_rate: 0.9}},"
            + " environments: {pr: {repeat: 3}}, paired: true}\n"
        )
    )
    assert suite.evaluate_options.repeat == 3
    assert isinstance(suite.evaluate_options.repeat, int)
    assert suite.evaluate_options.timeout_ms == 0
    assert suite.env == {"A": "1", "B": "text", "C": "True"}
    assert suite.gates.tags == ["smoke"]
    assert suite.gates.min_repeats == 2
    assert suite.gates.per_tag == {"news": {"min_pass_rate": 0.9}}
    assert suite.gates.for_environment("pr").repeat == 3


def test_a_json_test_file_error_names_its_line(write_suite, suite_error, tmp_path):
    path = write_suite(
        HEAD + "tests: file://t.json\n", files={"t.json": '[\n  {"vars": {"q": 1}},\n  {"vars"}\n]'}
    )
    error = suite_error(path)
    assert (error.file, error.line) == (str(tmp_path / "t.json"), 3)


def test_an_integer_too_long_to_read_names_its_key(write_suite, suite_error, tmp_path):
    path = write_suite(
        HEAD + "tests: file://t.jsonl\n",
        files={"t.jsonl": '{"vars": {"q": 1}}\n{"vars": {"id": ' + "7" * 5000 + "}}\n"},
    )
    error = suite_error(path)
    assert (error.file, error.line) == (str(tmp_path / "t.jsonl"), 2)
    assert "'id'" in error.message and "5000 digits" in error.message
