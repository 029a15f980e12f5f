"""Defaults the command line prints in its help and the engine applies: kept free of
imports, so `evals --help` loads nothing else."""

DEFAULT_STAGES = (5, 10, 20)
"""The cumulative repeats of a staged run's looks when `--until-decided` names none."""
