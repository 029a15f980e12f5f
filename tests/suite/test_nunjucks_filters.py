"""`nunjucksFilters` from Python files render in prompts and assertion values."""

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
        value: '{{ q | shout }} (hbw)'
"""


def test_filters_from_python_files_render_prompts_and_values(write_suite):
    suite = load_suite(write_suite(SUITE, files={"filters.py": FILTERS}))
    (record,) = run_evaluation(suite, RunOptions(use_store=False, progress=False)).records
    assert record.prompt == "HELLO BIG WORLD! (hbw)"
    assert record.passed, record.grade.reason


def test_a_filter_file_that_does_not_exist_is_a_suite_error(write_suite):
    path = write_suite(SUITE.replace("file://filters.py:shout", "file://missing.py:shout"))
    with pytest.raises(SuiteError, match="nunjucks filter 'shout' file not found"):
        load_suite(path)
