"""`nunjucksFilters` from Python and JavaScript files render in prompts (as in promptfoo,
not in assertion values)."""

from __future__ import annotations

import pytest

from evals.model.errors import SuiteError
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

FILTERS = """
def shout(text):
    return str(text).upper() + "!"


def initials(text):
    return "".join(word[0] for word in str(text).split())
"""

SUITE = """\
nunjucksFilters:
  shout: file://filters.py:shout
  initials: file://filters.py
prompts: ['{{ q | shout }} ({{ q | initials }})']
providers: [echo]
tests:
  - vars: {q: hello big world}
    assert:
      - type: equals
        value: 'HELLO BIG WORLD! (hbw)'
"""


def test_filters_from_python_files_render_prompts(write_suite):
    suite = load_suite(write_suite(SUITE, files={"filters.py": FILTERS}))
    (record,) = run_evaluation(suite, RunOptions(use_store=False, progress=False)).records
    assert record.prompt == "HELLO BIG WORLD! (hbw)"
    assert record.passed, record.grade.reason


def test_filters_are_not_available_to_assertion_values(write_suite):
    text = SUITE.replace("value: 'HELLO BIG WORLD! (hbw)'", "value: '{{ q | shout }}'")
    suite = load_suite(write_suite(text, files={"filters.py": FILTERS}))
    (record,) = run_evaluation(suite, RunOptions(use_store=False, progress=False)).records
    assert record.status == "error"
    assert "filter not found: shout" in (record.error or "")


def test_a_javascript_filter_that_exports_no_function_is_a_suite_error(write_suite):
    text = "nunjucksFilters: {bad: filters/bad.js}\nprompts: ['{{ q | bad }}']\nproviders: [echo]\n"
    path = write_suite(text, files={"filters/bad.js": "module.exports = 42;\n"})
    with pytest.raises(SuiteError, match="nunjucks filter 'bad' does not load"):
        load_suite(path)


def test_a_filter_file_that_does_not_exist_is_a_suite_error(write_suite):
    path = write_suite(SUITE.replace("file://filters.py:shout", "file://missing.py:shout"))
    with pytest.raises(SuiteError, match="nunjucks filter 'shout' file not found"):
        load_suite(path)


def test_a_suite_filter_does_not_replace_a_built_in_for_the_next_suite(tmp_path):
    # one process loading several suites (compat-check over a folder, a test session)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "rev.js").write_text("module.exports = (s) => 'custom';\n")
    (first / "suite.yaml").write_text(
        "nunjucksFilters: {reverse: rev.js}\nprompts: ['{{ q | reverse }}']\n"
        "providers: [echo]\ntests: [{vars: {q: [ab]}}]\n"
    )
    (second / "suite.yaml").write_text(
        "prompts: ['{{ q | reverse }}']\nproviders: [echo]\ntests: [{vars: {q: abc}}]\n"
    )
    options = RunOptions(use_store=False, progress=False)
    (custom,) = run_evaluation(load_suite(first / "suite.yaml"), options).records
    (built_in,) = run_evaluation(load_suite(second / "suite.yaml"), options).records
    assert (custom.prompt, built_in.prompt) == ("custom", "cba")
