"""Times as text, for any number a store may hold.

A stored time is a float: usually seconds since the epoch that `datetime` can show, but a
store written by another tool, by hand or by an older version may hold any float its
schema allows (an infinity, a time past the year 9999, a negative one). Every reader
that shows a stored time writes it with `utc_text`, which never raises.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime


def utc_text(seconds: float | None, shape: str = "%Y-%m-%d %H:%M UTC") -> str:
    """`seconds` since the epoch in UTC, formatted with `shape`; empty for None; a time
    `datetime` cannot show is written as words (`never` for +infinity, `after the year
    9999`, `before year 1`, `not a time`)."""
    if seconds is None:
        return ""
    try:
        value = float(seconds)
    except (TypeError, ValueError, OverflowError):
        return "not a time"
    if math.isnan(value):
        return "not a time"
    if math.isinf(value):
        return "never" if value > 0 else "before year 1"
    try:
        return datetime.fromtimestamp(value, UTC).strftime(shape)
    except (OverflowError, ValueError, OSError):
        return "after the year 9999" if value > 0 else "before year 1"
