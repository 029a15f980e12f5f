"""evals: a regression harness for tool-using LLM agents.

Everything imports as `evals.*`. The graders, report writers and dashboard live in the
top-level folders `graders/`, `reports/` and `dashboard/` of the source tree and are
installed inside this package as `evals.graders`, `evals.reports` and `evals.dashboard`
(pyproject's `package-dir`). In a source checkout, the symbolic links `evals/graders`,
`evals/reports` and `evals/dashboard` point at those folders, so tests, the type checker
and an editable install import the same files as an installed wheel.

The names users import from `evals` are listed in `__init__.pyi`: what a suite's Python,
a plugin (docs/extending.md) and a script running evaluations need. Each loads its module
on first use, so `import evals.model.errors` stays as cheap as it was. Modules not named
there, and every name starting with `_`, are the harness's own and may change.
"""

from evals.common.stubs import public_names

__version__ = "0.1.0"
__getattr__, __dir__ = public_names(__name__, __file__, "__version__")
