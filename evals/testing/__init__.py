"""Evaluations where Python teams already write tests: a pytest plugin and its helpers.

- `evals.testing.plugin`: the pytest plugin (entry point `pytest11`), loaded by pytest:
  `pytest --evals` runs every test marked `@pytest.mark.evals` k times per agent with
  the harness's seeds and ends with the harness's intervals, gates and store.
- `check`, `assert_trajectory`, `assert_policy`, `assert_budget`, `assert_verified`:
  one-line checks built on the harness's graders (`evals.testing.checks`).
- `cases_from`: cases drawn from a hypothesis strategy and recorded in a JSON file.
- `AgentResult`, `EvalsRun`: what `evals_agent(...)` returns and what `evals_run` is.

The names (`__init__.pyi`) load on first use, so pytest's loading of the plugin stays cheap.
"""

from evals.common.stubs import public_names

__getattr__, __dir__ = public_names(__name__, __file__)
