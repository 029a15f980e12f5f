"""Why corpus cases fail today: one entry per root cause, with where it lives and the fix.

A case that fails carries `xfail=cause(KEY)`; the reason then names the root cause, so
`python -m tests.hostile.report` groups the failing cases by cause. When a fix lands,
its cases pass, strict xfail turns them into failures, and the marks (and, once none
uses it, the entry here) are removed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RootCause:
    """A defect: a short name, what goes wrong, the code responsible, the fix recommended."""

    short: str
    what: str
    where: str
    fix: str


CAUSES: dict[str, RootCause] = {}


def cause(key: str) -> str:
    """The xfail reason of a case failing because of root cause `key`."""
    return f"[{key}] {CAUSES[key].short}"
