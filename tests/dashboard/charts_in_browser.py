"""Reading the dashboard's charts as the browser draws them, for the geometry tests.

Each chart drawn on the server is a figure whose picture is an SVG `data:` image. The
browser decodes the picture, and here the same SVG is laid out in the page at the width
the image was drawn (so text takes the size the reader sees), and every text, bar and
line is measured with the browser's own layout (`getBoundingClientRect`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MEASURE = """
(image) => {
  const b64 = image.getAttribute('src').split(',')[1];
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const holder = document.createElement('div');
  const shown = image.getBoundingClientRect();
  holder.style.cssText = `position:absolute;left:0;top:0;width:${shown.width}px;visibility:hidden`;
  holder.innerHTML = new TextDecoder().decode(bytes);
  document.body.appendChild(holder);
  const svg = holder.querySelector('svg');
  svg.setAttribute('width', shown.width);
  svg.setAttribute('height', shown.height);
  const box = el => {
    const r = el.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  const texts = [...svg.querySelectorAll('text')].map(t => ({
    text: t.textContent,
    cls: t.getAttribute('class') || '',
    axis: t.closest('g.axis') ? t.closest('g.axis').getAttribute('aria-label') : '',
    box: box(t),
  }));
  const bars = [...svg.querySelectorAll('rect.bar')].map(box);
  const intervals = [...svg.querySelectorAll('line.interval')].map(box);
  const grid = [...svg.querySelectorAll('g.axis line')].map(box);
  const result = {
    title: image.getAttribute('alt'),
    size: [shown.width, shown.height],
    natural: [image.naturalWidth, image.naturalHeight],
    frame: box(svg), texts, bars, intervals, grid,
  };
  holder.remove();
  return result;
}
"""


@dataclass(frozen=True, slots=True)
class Chart:
    """One chart as the browser laid it out: its title, rendered size, texts (with their
    class and the axis they belong to), bars, interval lines and axis grid lines, as
    boxes (left, top, right, bottom) in CSS pixels."""

    title: str
    size: tuple[float, float]
    frame: tuple[float, float, float, float]
    texts: list[dict[str, Any]]
    bars: list[tuple[float, float, float, float]]
    intervals: list[tuple[float, float, float, float]]
    grid: list[tuple[float, float, float, float]]


def charts_on(page: Any) -> list[Chart]:
    """Every server-drawn chart on the page, measured."""
    found = []
    for image in page.locator("figure.evals-chart img").all():
        measured = image.evaluate(MEASURE)
        found.append(
            Chart(
                measured["title"],
                tuple(measured["size"]),
                tuple(measured["frame"]),
                measured["texts"],
                [tuple(b) for b in measured["bars"]],
                [tuple(b) for b in measured["intervals"]],
                [tuple(b) for b in measured["grid"]],
            )
        )
    return found


def _overlap(a: tuple[float, ...], b: tuple[float, ...], axis: int) -> bool:
    """Whether two boxes overlap along x (axis 0) or y (axis 1), by more than half a pixel."""
    return min(a[axis + 2], b[axis + 2]) - max(a[axis], b[axis]) > 0.5


def overprinted(chart: Chart) -> list[str]:
    """Pairs of texts of the chart drawn over each other: tick labels of one axis, lane
    labels, any text with the title; empty when nothing overprints."""
    found = []
    texts = [t for t in chart.texts if t["text"].strip()]
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            if _overlap(a["box"], b["box"], 0) and _overlap(a["box"], b["box"], 1):
                found.append(f"{a['text']!r} over {b['text']!r} in {chart.title[:60]!r}")
    return found


def outside(chart: Chart) -> list[str]:
    """Texts and bars drawn (even partly) outside the picture."""
    left, top, right, bottom = chart.frame
    found = []
    for item in [*chart.texts, *({"text": "bar", "box": b} for b in chart.bars)]:
        x1, y1, x2, y2 = item["box"]
        if x1 < left - 1 or y1 < top - 1 or x2 > right + 1 or y2 > bottom + 1:
            found.append(f"{item['text']!r} outside {chart.title[:60]!r}")
    return found


def tick_values(chart: Chart, axis: str) -> list[str]:
    """The tick labels of one axis (by its name), in drawing order."""
    return [t["text"] for t in chart.texts if t["axis"] == axis and "tick" in t["cls"]]
