"""Bad promptfoo configs fail at load with the file, the place and what to change;
promptfoo's exit-code variables apply to suites without gates."""

from __future__ import annotations

import pytest

from evals.cli import main
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
from evals.suite.csv_tests import assertion_from_string
from evals.suite.derived import evaluate_metrics
from evals.suite.vars import var_combinations


def test_ragged_csv_row_names_csv_file_and_line(write_suite, suite_error, tmp_path):
    path = write_suite(
        "prompts: ['{{q}}']\nproviders: [echo]\ntests: file://t.csv\n",
        files={"t.csv": "q,__expected\na,contains:a\nb,contains:b,extra\n"},
    )
    err = suite_error(path)
    assert err.file == str(tmp_path / "t.csv")
    assert err.line == 3
    assert "quote" in (err.fix or "")


def test_missing_tests_file_names_the_suite_and_the_path(write_suite, suite_error):
    path = write_suite("prompts: ['{{q}}']\nproviders: [echo]\ntests: file://nope.yaml\n")
    err = suite_error(path)
    assert err.file == str(path)
    assert "nope.yaml" in err.message


def test_a_prompt_glob_matching_nothing_is_the_text_with_a_notice(write_suite):
    path = write_suite("prompts: ['file://p/*.txt']\nproviders: [echo]\n")
    suite = load_suite(path)
    assert [p.raw for p in suite.prompts] == ["file://p/*.txt"]
    assert any("no file matches the prompt" in notice for notice in suite.notices)


def test_template_error_names_the_prompt(write_suite, suite_error):
    path = write_suite("prompts: ['Hi {{ name }}{% if %}x{% endif %}']\nproviders: [echo]\n")
    err = suite_error(path)
    assert "template error in prompt 'Hi {{ name }}{% if %}" in err.message


def test_a_prompt_with_an_unclosed_tag_is_text_as_in_promptfoo(write_suite):
    path = write_suite("prompts: ['Hi {{ name ']\nproviders: [echo]\ntests: [{vars: {name: x}}]\n")
    (record,) = run_evaluation(load_suite(path), RunOptions(use_store=False)).records
    assert record.prompt == "Hi {{ name "


def test_an_invalid_json_schema_errors_the_rows_with_json_outputs(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - vars: {q: '{"a": 1}'}
            assert:
              - type: is-json
                value: {type: objekt}
          - vars: {q: not json}
            assert:
              - type: is-json
                value: {type: objekt}
        """
    )
    suite = load_suite(path)
    assert any(":6: " in n and "is-json" in n for n in suite.notices)
    json_row, text_row = run_evaluation(suite, RunOptions(use_store=False)).records
    assert json_row.status == "error" and "schema is invalid" in (json_row.error or "")
    assert text_row.status == "fail"


def test_unknown_provider_id_suggests_a_known_one(write_suite, suite_error):
    path = write_suite("prompts: ['{{q}}']\nproviders: [echoo]\n")
    assert "unknown provider id 'echoo'" in suite_error(path).message


def test_a_broken_transform_errors_its_rows_with_a_notice(write_suite):
    path = write_suite(
        "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - options: {transform: 'output +'}\n"
        "  - vars: {q: fine}\n"
    )
    suite = load_suite(path)
    assert any(":4: options.transform is not valid JavaScript" in n for n in suite.notices)
    broken, fine = run_evaluation(suite, RunOptions(use_store=False)).records
    assert broken.status == "error" and (broken.error or "").startswith("SyntaxError")
    assert fine.status == "pass"


def test_csv_cells_parse_like_promptfoo():
    assert assertion_from_string('contains-any:a, "b,c"') == {
        "type": "contains-any",
        "value": ["a", "b,c"],
    }
    assert assertion_from_string("not-starts-with:x") == {
        "type": "not-starts-with",
        "value": "x",
        "threshold": 0.75,
    }
    assert assertion_from_string("python:len(output) > 1") == {
        "type": "python",
        "value": "len(output) > 1",
    }
    assert assertion_from_string("plain words") == {"type": "equals", "value": "plain words"}


def test_only_string_arrays_expand():
    combos = var_combinations({"a": ["x", "y"], "b": [1, 2], "c": ["p", "q"]})
    assert combos == [
        {"a": "x", "b": [1, 2], "c": "p"},
        {"a": "x", "b": [1, 2], "c": "q"},
        {"a": "y", "b": [1, 2], "c": "p"},
        {"a": "y", "b": [1, 2], "c": "q"},
    ]


def test_derived_metrics_chain_and_divide_like_javascript():
    out = evaluate_metrics(
        [("ratio", "good / (good + bad)"), ("twice", "ratio * 2"), ("inf", "good / 0")],
        {"good": 3.0, "bad": 1.0},
        4,
    )
    assert out["ratio"] == 0.75
    assert out["twice"] == 1.5
    assert out["inf"] == float("inf")


SUITE = (
    "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n"
    "  - vars: {q: a}\n    assert: [{type: equals, value: a}]\n"
    "  - vars: {q: b}\n    assert: [{type: equals, value: c}]\n"
)


@pytest.mark.parametrize(
    ("env", "code"),
    [
        ({}, 100),
        ({"PROMPTFOO_FAILED_TEST_EXIT_CODE": "7"}, 7),
        ({"PROMPTFOO_PASS_RATE_THRESHOLD": "50"}, 0),
    ],
)
def test_promptfoo_exit_code_variables_without_gates(write_suite, monkeypatch, env, code):
    path = write_suite(SUITE)
    for name in ("PROMPTFOO_FAILED_TEST_EXIT_CODE", "PROMPTFOO_PASS_RATE_THRESHOLD"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["run", str(path), "--no-store", "--no-progress", "--quiet"]) == code
