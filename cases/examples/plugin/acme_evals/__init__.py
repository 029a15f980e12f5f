"""Acme's extensions of evals, found by evals through this distribution's entry points."""
