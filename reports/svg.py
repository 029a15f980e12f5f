"""Small inline SVG charts for the HTML report: points with interval whiskers.

Written by hand rather than through a plotting library so the report stays one
self-contained file with no fonts, scripts or images fetched, and renders identically
everywhere. Every label is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from evals.model.summary import Interval

ROW_HEIGHT = 22
LABEL_CHARS = 26
"""A row label's length before it is cut in the middle (longer where cutting would make
two labels read the same)."""
CHAR_WIDTH = 7  # pixels per character of a 12-pixel sans-serif label, generously
LABEL_WIDTH = LABEL_CHARS * CHAR_WIDTH
PLOT_WIDTH = 420
VALUE_WIDTH = 150
TOP = 28
COLOURS = {
    "regression": "#c62828",
    "improvement": "#2e7d32",
    "equivalent": "#757575",
    "inconclusive": "#f9a825",
    "insufficient data": "#9e9e9e",
}


@dataclass(frozen=True, slots=True)
class IntervalPoint:
    """One row of an interval chart: a label, a point estimate and its interval."""

    label: str
    value: float | None
    interval: Interval | None
    colour: str = "#1565c0"
    note: str = ""


def interval_chart(
    title: str, points: list[IntervalPoint], low: float, high: float, reference: float | None
) -> str:
    """A forest plot of `points` on the axis [low, high], with an optional reference line."""
    height = TOP + ROW_HEIGHT * len(points) + 24
    labels = distinct_labels([point.label for point in points])
    label_width = max([LABEL_WIDTH, *(CHAR_WIDTH * len(label) for label in labels)])
    width = label_width + PLOT_WIDTH + VALUE_WIDTH

    def x(value: float) -> float:
        clipped = min(max(value, low), high)
        return label_width + (clipped - low) / (high - low) * PLOT_WIDTH

    parts = [
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" '
        'font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    axis_y = TOP + ROW_HEIGHT * len(points)
    parts.append(
        f'<line x1="{x(low):.1f}" y1="{axis_y}" x2="{x(high):.1f}" y2="{axis_y}" stroke="#999"/>'
    )
    for tick in (low, (low + high) / 2, high):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{axis_y + 16}" text-anchor="middle" fill="#555">'
            f"{tick * 100:+.0f}</text>"
            if low < 0
            else f'<text x="{x(tick):.1f}" y="{axis_y + 16}" text-anchor="middle" fill="#555">'
            f"{tick * 100:.0f}%</text>"
        )
    if reference is not None:
        parts.append(
            f'<line x1="{x(reference):.1f}" y1="{TOP - 6}" x2="{x(reference):.1f}" '
            f'y2="{axis_y}" stroke="#999" stroke-dasharray="4 3"/>'
        )
    for row, (point, label) in enumerate(zip(points, labels, strict=True)):
        y = TOP + ROW_HEIGHT * row + ROW_HEIGHT / 2
        whole = f"<title>{escape(point.label)}</title>" if label != point.label else ""
        parts.append(f'<text x="0" y="{y + 4:.1f}">{whole}{escape(label)}</text>')
        if point.interval is not None:
            lo, hi = point.interval
            parts.append(
                f'<line x1="{x(lo):.1f}" y1="{y:.1f}" x2="{x(hi):.1f}" y2="{y:.1f}" '
                f'stroke="{point.colour}" stroke-width="2"/>'
            )
        if point.value is not None:
            parts.append(
                f'<circle cx="{x(point.value):.1f}" cy="{y:.1f}" r="4" fill="{point.colour}"/>'
            )
        if point.note:
            parts.append(
                f'<text x="{label_width + PLOT_WIDTH + 8}" y="{y + 4:.1f}" fill="#333">'
                f"{escape(point.note)}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def distinct_labels(names: list[str]) -> list[str]:
    """`names` shortened to LABEL_CHARS by cutting out their middle (cases that differ only
    at the end, such as four injected headlines of different tickers, keep their ends),
    and longer where a shorter cut would make two different names read the same."""
    size = LABEL_CHARS
    longest = max((len(name) for name in names), default=0)
    while True:
        labels = [_cut(name, size) for name in names]
        if len(set(labels)) == len(set(names)) or size >= longest:
            return labels
        size += 4


def _cut(name: str, size: int) -> str:
    if len(name) <= size:
        return name
    head = (size - 1) // 2
    return name[:head] + "…" + name[len(name) - (size - 1 - head) :]
