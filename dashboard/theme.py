"""The dashboard's colour convention and the small labels built on it.

Red means worse (a regression, a failed gate or run), green better (an improvement, a
passed gate or run), grey undecided (inconclusive, undetermined), ochre not enough data
to test, blue equivalent. Every
chart and badge takes its colour from here so the convention holds on every page.
"""

from __future__ import annotations

import base64
from typing import Any

from evals.common.clock import utc_text

RED = "#d1453b"
GREEN = "#2e9e5b"
GREY = "#8a8f98"
BLUE = "#3b6fd1"
AMBER = "#d99a25"
# Not enough runs to test: told apart from "inconclusive" (tested, undecided) at a glance.
OCHRE = "#b8a04a"

_TONES = {
    "regression": "red",
    "fail": "red",
    "error": "orange",
    "improvement": "green",
    "pass": "green",
    "equivalent": "blue",
    "insufficient data": "ochre",
}

_HEX = {"red": RED, "green": GREEN, "blue": BLUE, "orange": AMBER, "gray": GREY, "ochre": OCHRE}
# `st.badge` knows no ochre: its nearest colour.
_BADGE = {"ochre": "yellow"}

VERDICT_ORDER = ["regression", "improvement", "equivalent", "inconclusive", "insufficient data"]

AGENT_PALETTE = [BLUE, AMBER, "#7b4fc9", "#1f9aa8", "#c94f8a", "#6b8e23"]

# The browser tab's icon: a blue square, written into the page itself. An image would be
# stored by the server on every script run and fetched again each time a page writes
# its query string; a Material icon would be fetched from the internet.
FAVICON = (
    "data:image/svg+xml;base64,"
    + base64.b64encode(
        (
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
            f'<rect width="32" height="32" rx="6" fill="{BLUE}"/></svg>'
        ).encode()
    ).decode()
)


def tone(word: str | None) -> str:
    """The colour name of a verdict, gate or run status (see `hex_colour`)."""
    return _TONES.get(word or "", "gray")


def badge_tone(word: str | None) -> str:
    """The Streamlit colour name (for `st.badge`) of a verdict, gate or run status."""
    return _BADGE.get(tone(word), tone(word))


def hex_colour(word: str | None) -> str:
    """The hex colour of a verdict, gate or run status, for charts and tables."""
    return _HEX[tone(word)]


def verdict_scale() -> tuple[list[str], list[str]]:
    """(domain, range) of an Altair colour scale over group verdicts."""
    return VERDICT_ORDER, [hex_colour(v) for v in VERDICT_ORDER]


def when(timestamp: float | None) -> str:
    """A UTC timestamp as `YYYY-MM-DD HH:MM`, or an empty string; any stored float is shown."""
    return utc_text(timestamp, "%Y-%m-%d %H:%M")


def percent(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage, or an em dash when unknown."""
    return "—" if value is None else f"{value * 100:.{digits}f} %"


def interval_text(interval: list[float] | tuple[float, float] | None, scale: float = 100.0) -> str:
    """An interval as `[lo, hi]`, scaled (percentage points by default)."""
    if not interval:
        return "no interval"
    return f"[{interval[0] * scale:+.1f}, {interval[1] * scale:+.1f}]"


# Differences of pass rates are written in one unit on every page: percentage points.
POINTS = "pp"


def points(value: float | None) -> str:
    """A difference of pass rates in signed percentage points (`-45.0 pp`), or an em dash."""
    if value is None or value != value:
        return "—"
    return f"{value * 100 + 0.0:+.1f} {POINTS}"


def q_text(value: float | None) -> str:
    """A p- or q-value: three significant digits, in scientific notation below 1e-4 (so a
    tiny value never reads `0.0000` or `0`), an em dash when unknown."""
    if value is None or value != value:
        return "—"
    if value < 1e-4:
        return f"{value:.2e}"
    return f"{value:.3g}"


# Which correction makes each kind of group's q-value.
CORRECTIONS = {"case": "BH", "tag": "Holm"}


def q_label(kind: str) -> str:
    """The q column's name for a kind of group: `q (BH)` for cases, `q (Holm)` for tags."""
    return f"q ({CORRECTIONS[kind]})" if kind in CORRECTIONS else "q"


def evaluation_label(row: dict[str, Any]) -> str:
    """How an evaluation is named in pickers: time, environment, branch, commit and id."""
    parts = [when(row.get("started_at")), row.get("environment") or "no env"]
    if row.get("git_branch"):
        parts.append(row["git_branch"])
    if row.get("git_commit"):
        parts.append(row["git_commit"][:8])
    return f"{' · '.join(parts)} ({row['id']})"
