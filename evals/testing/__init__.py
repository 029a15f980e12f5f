"""Evaluations where Python teams already write tests: a pytest plugin and its helpers.

- `evals.testing.plugin`: the pytest plugin (entry point `pytest11`), loaded by pytest:
  `pytest --evals` runs every test marked `@pytest.mark.evals` k times per agent with
  the harness's seeds and ends with the harness's intervals, gates and store.
- `check`, `assert_trajectory`, `assert_policy`, `assert_budget`, `assert_verified`:
  one-line checks built on the harness's graders (`evals.testing.checks`).
- `cases_from`: cases drawn from a hypothesis strategy and recorded in a JSON file.
- `AgentResult`, `EvalsRun`: what `evals_agent(...)` returns and what `evals_run` is.

The names load on first use, so pytest's loading of the plugin stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals.testing.checks import (
        GradeFailed,
        UnknownCost,
        assert_budget,
        assert_policy,
        assert_trajectory,
        assert_verified,
        check,
    )
    from evals.testing.generated import cases_from
    from evals.testing.results import AgentResult
    from evals.testing.runs import EvalsRun

_HOMES = {
    "GradeFailed": "evals.testing.checks",
    "UnknownCost": "evals.testing.checks",
    "assert_budget": "evals.testing.checks",
    "assert_policy": "evals.testing.checks",
    "assert_trajectory": "evals.testing.checks",
    "assert_verified": "evals.testing.checks",
    "check": "evals.testing.checks",
    "cases_from": "evals.testing.generated",
    "AgentResult": "evals.testing.results",
    "EvalsRun": "evals.testing.runs",
}
__all__ = [
    "AgentResult",
    "EvalsRun",
    "GradeFailed",
    "UnknownCost",
    "assert_budget",
    "assert_policy",
    "assert_trajectory",
    "assert_verified",
    "cases_from",
    "check",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
