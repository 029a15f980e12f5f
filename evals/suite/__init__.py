"""Loading, validating and fingerprinting case suites (promptfoo-compatible YAML)."""

from evals.suite.loader import load_suite

__all__ = ["load_suite"]
