"""Loading, validating and fingerprinting case suites (promptfoo-compatible YAML)."""

from evals.suite.loader import load_suite
from evals.suite.model import Assertion, Case, Prompt, ProviderSpec, Suite

__all__ = ["Assertion", "Case", "Prompt", "ProviderSpec", "Suite", "load_suite"]
