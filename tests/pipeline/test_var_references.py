"""A var naming another var (`{{ other }}`) is resolved for the run's checks too, as
promptfoo resolves it in the vars its assertions see: assertion values, `context.vars` of
script checks and metric names."""

from __future__ import annotations

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

SUITE = """\
prompts: ['Q: {{ city }} is in {{ country }}']
providers: [echo]
tests:
  - vars:
      country: France
      city: 'the capital of {{ country }}'
    assert:
      - type: equals
        value: 'Q: {{ city }} is in {{ country }}'
      - type: icontains
        value: '{{ city | upper }}'
      - type: javascript
        value: context.vars.city === 'the capital of France'
      - type: python
        value: context['vars']['city'] == 'the capital of France'
      - type: contains
        value: capital
        metric: 'about {{ city }}'
"""


def test_checks_see_the_vars_the_prompt_was_rendered_with(write_suite):
    suite = load_suite(write_suite(SUITE))
    (record,) = run_evaluation(suite, RunOptions(use_store=False, progress=False)).records
    assert record.response.output == "Q: the capital of France is in France"
    assert record.grade is not None
    assert [c.passed for c in record.grade.component_results] == [True] * 5
    assert record.grade.named_scores == {"about the capital of France": 1.0}
