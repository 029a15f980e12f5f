"""Charts of the first view drawn on the server as SVG: no chart library in the browser.

A Vega-Lite chart makes a fresh browser fetch and compile the Vega bundle (about 0.75 MB of
script) before it draws anything; the same chart drawn on the server is drawn with the
page's HTML. Each chart is a figure: a picture (SVG as a `data:` image: title, dated axes
in UTC, number axes whose labels are all different, interval bands, lines, legend) under
its points, which are HTML links (`<a href>`, same tab) to what they summarise, each with
a tooltip (`title`) naming what it shows, placed in percentages of the picture so they
stay on it at any width. The picture's `alt` text is the chart's text alternative.

Streamlit's `st.html` strips inline SVG, and Markdown's raw HTML turns every SVG node into
a React element in the browser (a trend of 60 evaluations: thousands); an image and one
link per point are a handful of DOM nodes set at once. The interactive Vega-Lite charts
stay on the pages, drawn on demand.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from evals.dashboard import charts, theme

WIDTH = 900
LEFT, RIGHT, TOP, BOTTOM = 78, 16, 46, 34
FONT = 'font-family="sans-serif" font-size="12"'
POINT = 10  # a point's diameter in CSS pixels
STYLE = (
    "<style>.evals-chart{position:relative;margin:0 0 1rem 0;max-width:100%}"
    ".evals-chart img{display:block;width:100%;height:auto}"
    f".evals-chart .point{{position:absolute;width:{POINT}px;height:{POINT}px;"
    f"margin:-{POINT // 2}px 0 0 -{POINT // 2}px;border-radius:50%;display:block}}"
    ".evals-chart .diamond{border-radius:1px;transform:rotate(45deg);"
    f"width:{POINT + 1}px;height:{POINT + 1}px}}"
    ".evals-chart a.point:hover,.evals-chart a.point:focus{outline:2px solid #222;"
    "outline-offset:1px}</style>"
)


def _e(text: object) -> str:
    # Line breaks as references: the chart travels as one line of Markdown's raw HTML.
    return html.escape(str(text), quote=True).replace("\n", "&#10;")


def format_number(value: float, axis_format: str) -> str:
    """`value` written as the d3 format `axis_format` writes it (the subset the dashboard
    uses: sign `+`, currency `$`, thousands `,`, precision, and `%` or `f`)."""
    match = re.fullmatch(r"([+]?)(\$?)(,?)\.(\d+)([f%])", axis_format)
    if match is None:
        raise ValueError(f"unsupported number format {axis_format!r}")
    sign, currency, comma, digits, kind = match.groups()
    shown = value * 100 if kind == "%" else value
    text = f"{abs(shown):{',' if comma else ''}.{int(digits)}f}"
    negative = shown < 0 and float(text.replace(",", "")) != 0
    lead = "−" if negative else ("+" if sign else "")
    return f"{lead}{currency}{text}{'%' if kind == '%' else ''}"


def number_ticks(low: float, high: float, axis_format: str, count: int = 5) -> list[float]:
    """About `count` round ticks covering [low, high], never closer than the smallest
    difference `axis_format` shows, so no two labels read the same; at least two."""
    step_floor = charts.label_step(axis_format)
    span = max(high - low, step_floor)
    raw = span / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    step = max(step, step_floor)
    first = math.floor(low / step) * step
    last = math.ceil(high / step) * step
    if last - first < step:
        last = first + step
    ticks = []
    value = first
    while value <= last + step / 2:
        ticks.append(round(value, 12))
        value += step
    return ticks


# Steps a time axis may take, in seconds: ticks land on whole minutes, hours or UTC days.
DATE_STEPS = (
    60,
    300,
    900,
    1800,
    3600,
    3 * 3600,
    6 * 3600,
    12 * 3600,
    86_400,
    2 * 86_400,
    7 * 86_400,
    14 * 86_400,
    28 * 86_400,
    91 * 86_400,
    364 * 86_400,
)


def date_label(stamp: float, step: float = 0.0) -> str:
    """A time axis label in UTC whatever the reader's zone: `Dec 05 03:00`; `Dec 05` on an
    axis whose ticks are whole days apart, `Dec 05 2025` when they are months apart."""
    shape = "%b %d %H:%M" if step < 86_400 else "%b %d" if step < 91 * 86_400 else "%b %d %Y"
    return datetime.fromtimestamp(stamp, UTC).strftime(shape)


def date_ticks(low: float, high: float, count: int = 6) -> tuple[list[float], float]:
    """At most `count` instants in [low, high] on whole minutes, hours or UTC days (the
    smallest such step that keeps them that few), and that step (0 for an empty span), so
    the labels read as a calendar does rather than at arbitrary times."""
    if high <= low:
        return [low], 0.0
    for step in DATE_STEPS:
        if (high - math.ceil(low / step) * step) // step + 1 <= count:
            break
    else:
        step = DATE_STEPS[-1] * math.ceil((high - low) / (DATE_STEPS[-1] * (count - 1)))
    first = math.ceil(low / step) * step
    ticks = [float(first + step * i) for i in range(int((high - first) // step) + 1)]
    return (ticks or [low]), float(step)


@dataclass(frozen=True, slots=True)
class Scale:
    """A linear map from a data interval onto a pixel interval."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.start + (value - self.low) / span * (self.end - self.start)


def draw(*charts: str) -> None:
    """Put charts (and any HTML written with them) on the page as one HTML block."""
    st.html(STYLE + "".join(charts))


@dataclass(frozen=True, slots=True)
class Mark:
    """A chart's point, in the picture's coordinates: its colour, tooltip, and the address
    it opens (None: a tooltip only); a diamond rather than a dot when `diamond`."""

    x: float
    y: float
    colour: str
    tip: str
    href: str | None
    diamond: bool = False


def _figure(title: str, description: str, height: int, body: str, marks: Sequence[Mark]) -> str:
    picture = (
        f'<svg viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" {FONT}><title>{_e(title)}</title>'
        f"<desc>{_e(description)}</desc>"
        f'<text x="{LEFT}" y="18" font-size="14" font-weight="600">{_e(title)}</text>'
        f"{body}</svg>"
    )
    source = "data:image/svg+xml;base64," + base64.b64encode(picture.encode()).decode()
    points = []
    for mark in marks:
        where = (
            f"left:{mark.x / WIDTH * 100:.2f}%;top:{mark.y / height * 100:.2f}%;"
            f"background:{mark.colour}"
        )
        shape = "point diamond" if mark.diamond else "point"
        if mark.href is None:
            points.append(f'<span class="{shape}" title="{_e(mark.tip)}" style="{where}"></span>')
        else:
            # An empty link's `title` is its accessible name as well as its tooltip.
            points.append(
                f'<a class="{shape}" href="{_e(mark.href)}" title="{_e(mark.tip)}" '
                f'style="{where}"></a>'
            )
    return (
        f'<figure class="evals-chart" aria-label="{_e(title)}">'
        f'<img src="{source}" alt="{_e(title)}: {_e(description)}" />'
        f"{''.join(points)}</figure>"
    )


def _legend(items: Sequence[tuple[str, str]]) -> str:
    parts, x = [], LEFT
    for label, colour in items:
        parts.append(
            f'<circle cx="{x + 5}" cy="33" r="5" fill="{colour}"/>'
            f'<text x="{x + 14}" y="37">{_e(label)}</text>'
        )
        x += 24 + 7 * len(label)
    return "".join(parts)


def _number_axis(scale: Scale, ticks: list[float], axis_format: str, title: str) -> str:
    lines = [f'<g class="axis number-axis" aria-label="{_e(title)}">']
    for tick in ticks:
        y = scale(tick)
        lines.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e5e8"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{_e(format_number(tick, axis_format))}</text>"
        )
    middle = (scale.start + scale.end) / 2
    lines.append(
        f'<text x="14" y="{middle:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {middle:.1f})">{_e(title)}</text></g>'
    )
    return "".join(lines)


def _date_axis(scale: Scale, ticks: list[float], step: float, y: float) -> str:
    parts = ['<g class="axis date-axis" aria-label="started (UTC)">']
    for tick in ticks:
        x = scale(tick)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y:.1f}" y2="{y + 5:.1f}" stroke="#888"/>'
            f'<text class="tick" x="{x:.1f}" y="{y + 18:.1f}" text-anchor="middle">'
            f"{_e(date_label(tick, step))}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def trend(
    frame: pd.DataFrame,
    *,
    value: str,
    low: str | None,
    high: str | None,
    title: str,
    axis_title: str,
    axis_format: str,
    href: Callable[[str], str],
    height: int = 260,
) -> str:
    """A value per agent over time as a figure (HTML): a line through linked points over
    the interval band (`low`, `high`; None: no band).

    `frame` has `started` (UTC datetime), `when`, `agent`, `evaluation`, `commit`,
    `verdict` and the value columns. Each point's tooltip names when it started, its
    evaluation, commit and agent, the value and its interval, and the gate verdict; each
    point links to `href(evaluation)`.
    """
    shown = frame.dropna(subset=[value]).sort_values("started")
    stamps = [t.timestamp() for t in shown["started"]]
    bounds = [*shown[value]]
    if low is not None and high is not None:
        bounds += [v for v in [*shown[low], *shown[high]] if pd.notna(v)]
    ticks = number_ticks(min(bounds), max(bounds), axis_format)
    y = Scale(ticks[0], ticks[-1], height - BOTTOM, TOP + 8)
    margin = (max(stamps) - min(stamps)) * 0.02 or 3600.0
    x = Scale(min(stamps) - margin, max(stamps) + margin, LEFT + 8, WIDTH - RIGHT - 8)
    agents = list(dict.fromkeys(shown["agent"]))
    colours = {a: theme.AGENT_PALETTE[i % len(theme.AGENT_PALETTE)] for i, a in enumerate(agents)}
    body = [
        _number_axis(y, ticks, axis_format, axis_title),
        _date_axis(x, *date_ticks(min(stamps), max(stamps)), height - BOTTOM),
        _legend([(a, colours[a]) for a in agents]),
    ]
    marks: list[Mark] = []
    for agent in agents:
        rows = shown[shown["agent"] == agent]
        colour = colours[agent]
        xs = [x(t.timestamp()) for t in rows["started"]]
        if low is not None and high is not None:
            banded = rows.dropna(subset=[low, high])
            bx = [x(t.timestamp()) for t in banded["started"]]
            upper = [f"{px:.1f},{y(v):.1f}" for px, v in zip(bx, banded[high], strict=True)]
            lower = [f"{px:.1f},{y(v):.1f}" for px, v in zip(bx, banded[low], strict=True)]
            if upper:
                body.append(
                    f'<polygon points="{" ".join(upper + lower[::-1])}" fill="{colour}" '
                    'fill-opacity="0.18" stroke="none"/>'
                )
        points = " ".join(f"{px:.1f},{y(v):.1f}" for px, v in zip(xs, rows[value], strict=True))
        body.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for px, row in zip(xs, rows.to_dict("records"), strict=True):
            tip = [
                f"started (UTC): {row['when']}",
                f"evaluation: {row['evaluation']}",
                f"commit: {row['commit']}",
                f"agent: {agent}",
                f"{axis_title}: {format_number(row[value], axis_format)}",
            ]
            if low is not None and high is not None and pd.notna(row[low]):
                tip.append(
                    f"interval: {format_number(row[low], axis_format)} to "
                    f"{format_number(row[high], axis_format)}"
                )
            tip.append(f"gate verdict: {row['verdict'] or 'none'}")
            marks.append(Mark(px, y(row[value]), colour, "\n".join(tip), href(row["evaluation"])))
    latest = shown.drop_duplicates("agent", keep="last")
    description = (
        f"{axis_title} of {len(shown['evaluation'].unique())} evaluations from "
        f"{date_label(min(stamps))} to {date_label(max(stamps))} UTC; latest: "
        + ", ".join(
            f"{r['agent']} {format_number(r[value], axis_format)}"
            for r in latest.to_dict("records")
        )
    )
    return _figure(title, description, height, "".join(body), marks)


def forest(frame: pd.DataFrame, *, title: str, href: Callable[[str], str | None]) -> str:
    """Differences (candidate − baseline) with intervals, one row per group, as a figure
    (HTML).

    `frame` has `group`, `difference`, `low`, `high`, `verdict`, `cases`; a row whose
    `href(group)` is not None links there (a tag's row: the comparison's cases of that tag).
    """
    axis_format = "+.0%"
    row_height = 28
    height = TOP + 20 + row_height * len(frame) + BOTTOM
    label_width = 230
    values = [v for c in ("difference", "low", "high") for v in frame[c] if pd.notna(v)] + [0.0]
    ticks = number_ticks(min(values), max(values), axis_format)
    x = Scale(ticks[0], ticks[-1], label_width + 10, WIDTH - RIGHT - 10)
    bottom = height - BOTTOM
    body = ['<g class="axis number-axis" aria-label="pass-rate difference">']
    for tick in ticks:
        px = x(tick)
        body.append(
            f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{TOP}" y2="{bottom}" stroke="#e3e5e8"/>'
            f'<text class="tick" x="{px:.1f}" y="{bottom + 16}" text-anchor="middle">'
            f"{_e(format_number(tick, axis_format))}</text>"
        )
    body.append(
        f'<text x="{(x.start + x.end) / 2:.1f}" y="{bottom + 31}" text-anchor="middle">'
        "pass-rate difference, candidate − baseline</text></g>"
    )
    body.append(
        f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{TOP}" y2="{bottom}" '
        f'stroke="{theme.GREY}" stroke-dasharray="4 4"/>'
    )
    verdicts = list(dict.fromkeys(frame["verdict"]))
    marks: list[Mark] = []
    body.append(_legend([(v, theme.hex_colour(v)) for v in verdicts]))
    for index, row in enumerate(frame.to_dict("records")):
        cy = TOP + 14 + index * row_height
        colour = theme.hex_colour(row["verdict"])
        label = row["group"] if len(row["group"]) <= 34 else row["group"][:33] + "…"
        body.append(f'<text x="{label_width}" y="{cy + 4}" text-anchor="end">{_e(label)}</text>')
        bounded = pd.notna(row["low"]) and pd.notna(row["high"])
        if bounded:
            body.append(
                f'<line x1="{x(row["low"]):.1f}" x2="{x(row["high"]):.1f}" y1="{cy}" '
                f'y2="{cy}" stroke="{colour}" stroke-width="3"/>'
            )
        tip = "\n".join(
            [
                str(row["group"]),
                f"cases: {row['cases']}",
                f"difference: {format_number(row['difference'], '+.1%')}",
                f"interval: {format_number(row['low'], '+.1%')} to "
                f"{format_number(row['high'], '+.1%')}"
                if bounded
                else "interval: none",
                f"verdict: {row['verdict']}",
            ]
        )
        marks.append(Mark(x(row["difference"]), cy, colour, tip, href(row["group"]), True))
    description = "; ".join(
        f"{r['group']}: {format_number(r['difference'], '+.1%')} "
        + (
            f"({format_number(r['low'], '+.1%')} to {format_number(r['high'], '+.1%')}), "
            if pd.notna(r["low"]) and pd.notna(r["high"])
            else "(no interval), "
        )
        + str(r["verdict"])
        for r in frame.to_dict("records")
    )
    return _figure(title, description, height, "".join(body), marks)


def _x_axis(
    scale: Scale, ticks: list[float], axis_format: str, title: str, top: float, bottom: float
) -> str:
    """A horizontal number axis: grid lines from `top` to `bottom`, tick labels under
    `bottom` and the axis title under them."""
    parts = [f'<g class="axis number-axis" aria-label="{_e(title)}">']
    for tick in ticks:
        px = scale(tick)
        parts.append(
            f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{top}" y2="{bottom}" stroke="#e3e5e8"/>'
            f'<text class="tick" x="{px:.1f}" y="{bottom + 19}" text-anchor="middle">'
            f"{_e(format_number(tick, axis_format))}</text>"
        )
    parts.append(
        f'<text class="axis-title" x="{(scale.start + scale.end) / 2:.1f}" y="{bottom + 35}" '
        f'text-anchor="middle">{_e(title)}</text></g>'
    )
    return "".join(parts)


def _label(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Rows of the charts with one row per item (forest, intervals, waterfall), in the picture's
# units, and the room for their labels on the left.
ROW = 28
LABELS = 230


def time_format(largest: float) -> str:
    """The number format of an axis of milliseconds whose largest value is `largest`:
    tenths below 10 ms, whole milliseconds above."""
    return ",.1f" if largest < 10 else ",.0f"


def waterfall(frame: pd.DataFrame, *, title: str) -> str:
    """Spans of one run as horizontal bars from start to end (milliseconds), one lane per
    span, labelled on the left, coloured by kind, errors outlined in red, as a figure.

    `frame` has `label`, `kind`, `start_ms`, `end_ms`, `status`; the step table beside
    it gives each span's numbers."""
    kinds = ["model", "tool", "approval", "message", "span"]
    palette = dict(
        zip(kinds, [theme.BLUE, theme.AMBER, "#7b4fc9", theme.GREY, "#1f9aa8"], strict=True)
    )
    rows = frame.to_dict("records")
    height = TOP + 12 + ROW * len(rows) + BOTTOM + 14
    largest = max([float(r["end_ms"]) for r in rows] + [0.0])
    axis_format = time_format(largest)
    ticks = number_ticks(0.0, max(largest, charts.label_step(axis_format)), axis_format)
    x = Scale(ticks[0], ticks[-1], LABELS + 10, WIDTH - RIGHT - 10)
    bottom = TOP + 12 + ROW * len(rows)
    body = [_x_axis(x, ticks, axis_format, "time since the run started (ms)", TOP, bottom)]
    shown_kinds = [k for k in kinds if k in {r["kind"] for r in rows}]
    body.append(_legend([(k, palette[k]) for k in shown_kinds]))
    for index, row in enumerate(rows):
        cy = TOP + 12 + index * ROW + ROW / 2
        start, end = float(row["start_ms"]), float(row["end_ms"])
        x1, x2 = x(start), max(x(end), x(start) + 2)
        colour = palette.get(str(row["kind"]), theme.GREY)
        outline = f' stroke="{theme.RED}" stroke-width="2"' if row["status"] == "error" else ""
        body.append(
            f'<text class="lane-label" x="{LABELS}" y="{cy + 4:.1f}" text-anchor="end">'
            f"{_e(_label(str(row['label'])))}</text>"
            f'<rect class="bar" x="{x1:.1f}" y="{cy - 7:.1f}" width="{x2 - x1:.1f}" height="14" '
            f'rx="2" fill="{colour}"{outline}/>'
        )
    description = f"{len(rows)} spans over {largest:,.1f} ms; " + "; ".join(
        f"{r['label']}: {float(r['start_ms']):,.1f}–{float(r['end_ms']):,.1f} ms" for r in rows[:20]
    )
    return _figure(title, description, height, "".join(body), [])


def intervals(frame: pd.DataFrame, *, title: str, axis_title: str, axis_format: str) -> str:
    """One estimate per agent with its interval, one row each, as a figure. `frame` has
    `agent`, `value`, `low`, `high`; the axis covers every interval."""
    rows = frame.to_dict("records")
    height = TOP + 20 + ROW * len(rows) + BOTTOM + 14
    values = [float(v) for r in rows for v in (r["value"], r["low"], r["high"])]
    ticks = number_ticks(min(values), max(values), axis_format)
    x = Scale(ticks[0], ticks[-1], LABELS + 10, WIDTH - RIGHT - 10)
    bottom = TOP + 20 + ROW * len(rows)
    body = [_x_axis(x, ticks, axis_format, axis_title, TOP, bottom)]
    colours = {
        r["agent"]: theme.AGENT_PALETTE[i % len(theme.AGENT_PALETTE)] for i, r in enumerate(rows)
    }
    marks = []
    for index, row in enumerate(rows):
        cy = TOP + 14 + index * ROW + ROW / 2
        colour = colours[row["agent"]]
        body.append(
            f'<text class="lane-label" x="{LABELS}" y="{cy + 4:.1f}" text-anchor="end">'
            f"{_e(_label(str(row['agent'])))}</text>"
            f'<line class="interval" x1="{x(row["low"]):.1f}" x2="{x(row["high"]):.1f}" '
            f'y1="{cy:.1f}" y2="{cy:.1f}" stroke="{colour}" stroke-width="3"/>'
        )
        tip = (
            f"{row['agent']}\n{axis_title}: {format_number(row['value'], axis_format)}\n"
            f"interval: {format_number(row['low'], axis_format)} to "
            f"{format_number(row['high'], axis_format)}"
        )
        marks.append(Mark(x(row["value"]), cy, colour, tip, None))
    description = "; ".join(
        f"{r['agent']}: {format_number(r['value'], axis_format)} "
        f"({format_number(r['low'], axis_format)} to {format_number(r['high'], axis_format)})"
        for r in rows
    )
    return _figure(title, description, height, "".join(body), marks)


def histogram(
    frame: pd.DataFrame, *, title: str, axis_title: str, axis_format: str, height: int = 240
) -> str:
    """Runs per bin, one colour per agent, each agent's bar in its slice of the bin,
    standing on the zero line, as a figure. `frame` is `frames.bin_counts`'s: `agent`,
    `low`, `high`, `runs`, `left`, `right`."""
    rows = frame.to_dict("records")
    agents = list(dict.fromkeys(str(r["agent"]) for r in rows))
    colours = {a: theme.AGENT_PALETTE[i % len(theme.AGENT_PALETTE)] for i, a in enumerate(agents)}
    lows, highs = [float(r["low"]) for r in rows], [float(r["high"]) for r in rows]
    x_ticks = number_ticks(min(lows), max(highs), axis_format)
    x = Scale(x_ticks[0], x_ticks[-1], LEFT + 8, WIDTH - RIGHT - 8)
    most = max([int(r["runs"]) for r in rows] + [1])
    y_ticks = number_ticks(0.0, float(most), ",.0f")
    bottom = height - BOTTOM - 14
    y = Scale(y_ticks[0], y_ticks[-1], bottom, TOP + 8)
    body = [
        _number_axis(y, y_ticks, ",.0f", "runs"),
        _x_axis(x, x_ticks, axis_format, axis_title, bottom, bottom),
        _legend([(a, colours[a]) for a in agents]),
    ]
    for row in rows:
        if not row["runs"]:
            continue
        x1, x2 = x(float(row["left"])), x(float(row["right"]))
        top = y(float(row["runs"]))
        colour = colours[str(row["agent"])]
        body.append(
            f'<rect class="bar" x="{x1:.1f}" y="{top:.1f}" width="{max(x2 - x1, 1.0):.1f}" '
            f'height="{bottom - top:.1f}" fill="{colour}" fill-opacity="0.85"/>'
        )
    description = (
        f"{sum(int(r['runs']) for r in rows)} runs of {len(agents)} agent(s) from "
        f"{format_number(min(lows), axis_format)} to {format_number(max(highs), axis_format)}"
    )
    return _figure(title, description, height, "".join(body), [])
