"""A run's output is the transformed one, as promptfoo reports it: in the record and the
JSON report (its graders saw the same text)."""

from __future__ import annotations

import json

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.reports.data_files import render_json
from evals.suite import load_suite

SUITE = """\
prompts: ['say {{ q }}']
providers:
  - id: echo
    transform: 'output.toUpperCase()'
tests:
  - vars: {q: hello}
    assert: [{type: equals, value: SAY HELLO}]
  - vars: {q: size}
    options: {transform: 'output.length'}
    assert: [{type: javascript, value: 'output === 8'}]
"""


def test_records_and_the_json_report_carry_the_transformed_output(write_suite):
    suite = load_suite(write_suite(SUITE))
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False))
    outputs = {r.vars["q"]: r.response.output for r in result.records}
    assert outputs == {"hello": "SAY HELLO", "size": 8}
    assert [r.passed for r in result.records] == [True, True]
    rows = json.loads(render_json(result))["results"]["results"]
    assert sorted(json.dumps(row["response"]["output"]) for row in rows) == ['"SAY HELLO"', "8"]
