"""Loading, validating and fingerprinting case suites (promptfoo-compatible YAML)."""

from evals.suite.loader import load_suite, load_suite_settings

__all__ = ["load_suite", "load_suite_settings"]
