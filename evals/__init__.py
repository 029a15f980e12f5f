"""evals: a regression harness for tool-using LLM agents.

Everything imports as `evals.*`. The graders, report writers and dashboard live in the
top-level folders `graders/`, `reports/` and `dashboard/` of the source tree and are
installed inside this package as `evals.graders`, `evals.reports` and `evals.dashboard`
(pyproject's `package-dir`). In a source checkout, the symbolic links `evals/graders`,
`evals/reports` and `evals/dashboard` point at those folders, so tests, the type checker
and an editable install import the same files as an installed wheel.
"""

from __future__ import annotations

__version__ = "0.1.0"
