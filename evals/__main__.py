"""`python -m evals` runs the command line."""

from evals.cli import console

console()
