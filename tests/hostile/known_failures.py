"""Corpus cases that fail today, by root cause (see rootcauses.py for each cause).

Each entry turns its cases into strict xfails. A fix makes them pass, which strict xfail
reports as a failure: remove the fixed cases here (and the cause once it has none).
"""

from __future__ import annotations

KNOWN_FAILURES: dict[str, tuple[str, ...]] = {}


def failing_cause(case_key: str) -> str | None:
    """The root cause a case (`category/id`) fails by today, if it does."""
    for cause, cases in KNOWN_FAILURES.items():
        if case_key in cases:
            return cause
    return None
