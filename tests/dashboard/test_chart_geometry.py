"""Every chart read as the browser draws it, at a laptop's width (1366 px) and a desktop's
(1920 px): the Case page's step waterfall, Cost and latency's histograms and interval
charts (every run costing the same among them), Compare's forest plot, Overview's trends.
No text overprints another, nothing falls outside its picture, each waterfall lane and
each bar has room, axes cover what they show, and the two runs' trajectory tables on the
Case page stay in their own columns.

Skipped unless EVALS_TEST_CHROMIUM names a Chromium binary.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dashboard.browser import ConsoleErrors, ScriptRuns, chromium, serve
from tests.dashboard.charts_in_browser import (
    Chart,
    _overlap,
    charts_on,
    outside,
    overprinted,
    tick_values,
)
from tests.dashboard.conftest import run_demo
from tests.dashboard.nightly_project import build_history

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("EVALS_TEST_CHROMIUM")
if not CHROMIUM:
    pytest.skip("set EVALS_TEST_CHROMIUM to a Chromium binary", allow_module_level=True)

WIDTHS = (1366, 1920)
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The demo suite run twice (runs with timed steps), and four nights of a team's own
    project (every run of it costs the same)."""
    folder = tmp_path_factory.mktemp("geometry")
    demo = f"sqlite:///{folder / 'demo.db'}"
    run_demo(demo, repeat=3, environment="nightly")
    run_demo(demo, repeat=3, environment="nightly")
    nightly = f"sqlite:///{folder / 'nightly.db'}"
    build_history(folder / "project", nightly, range(1, 5))
    return {"demo": demo, "nightly": nightly}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert CHROMIUM is not None
    with chromium(CHROMIUM) as launched:
        yield launched


def _visit(browser: Any, address: str, width: int, switch: str | None = None) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(120_000)
    runs, errors = ScriptRuns(page), ConsoleErrors(page)
    runs.after(lambda: page.goto(address))
    if switch is not None:
        runs.after(lambda: page.get_by_text(switch, exact=True).click())
    assert errors.unexpected() == []
    return page


def _sound(chart: Chart) -> None:
    assert chart.size[1] >= 100, f"{chart.title!r} crushed to {chart.size}"
    smallest = min(t["box"][3] - t["box"][1] for t in chart.texts)
    assert smallest >= 10, f"text {smallest:.1f} px high in {chart.title[:60]!r}"
    assert overprinted(chart) == []
    assert outside(chart) == []


def _lanes_apart(chart: Chart) -> None:
    """Each bar in a lane of its own: no two bars share height (a waterfall's spans)."""
    bars = sorted(chart.bars, key=lambda b: b[1])
    assert bars
    for upper, lower in itertools.pairwise(bars):
        assert not _overlap(upper, lower, 1), f"lanes overprint in {chart.title!r}"
    for bar in bars:
        assert bar[3] - bar[1] >= 8, "a lane too thin to read"
    labels = sorted((t for t in chart.texts if t["cls"] == "lane-label"), key=lambda t: t["box"][1])
    assert len(labels) == len(bars)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_case_waterfall_and_trajectory_tables(stores, browser, width: int) -> None:
    with serve(stores["demo"]) as address:
        page = _visit(browser, f"{address}/case", width, "Timings, tokens and cost per step")
        waterfalls = [c for c in charts_on(page) if "steps (ms)" in c.title or "trace" in c.title]
        assert len(waterfalls) == 2
        for chart in waterfalls:
            _sound(chart)
            _lanes_apart(chart)
            ticks = tick_values(chart, "time since the run started (ms)")
            assert ticks[0] == "0" or ticks[0].startswith("0.")
            grid_right = max(g[2] for g in chart.grid)
            assert max(bar[2] for bar in chart.bars) <= grid_right + 1  # the axis covers the spans
        columns = page.locator(".two-runs").first.locator(":scope > .run-column").all()
        assert len(columns) == 2
        left, right = (c.bounding_box() for c in columns)
        assert (
            left["x"] + left["width"] <= right["x"] + 0.5
            or right["y"] >= left["y"] + left["height"] - 0.5
        )
        for column in columns:
            box = column.bounding_box()
            for table in column.locator("table").all():
                shown = table.bounding_box()
                scrolls = column.evaluate("c => c.scrollWidth > c.clientWidth")
                assert shown["x"] + shown["width"] <= box["x"] + box["width"] + 0.5 or scrolls
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"case-waterfall-{width}.png"))
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_cost_and_latency_histograms_and_intervals(stores, browser, width: int) -> None:
    with serve(stores["nightly"]) as address:
        page = _visit(browser, f"{address}/cost_latency", width)
        drawn = {c.title.split(":")[0]: c for c in charts_on(page)}
        for title in ("Latency per answered run", "Cost per answered run"):
            chart = drawn[title]
            _sound(chart)
            zero = next(t for t in chart.texts if t["axis"] == "runs" and t["text"] == "0")
            baseline_y = (zero["box"][1] + zero["box"][3]) / 2
            for bar in chart.bars:  # every bar stands on the zero line
                assert abs(bar[3] - baseline_y) <= 2.5
                assert bar[3] - bar[1] > 0.5
        cost_ticks = tick_values(drawn["Cost per answered run"], "cost (USD)")
        assert not any(t.startswith("−") for t in cost_ticks), (
            cost_ticks
        )  # equal costs: no negative axis
        assert any(t == "$0.0020" for t in cost_ticks), cost_ticks
        for title in (
            "p95 latency with its interval over cases",
            "Cost per accepted task with its interval",
        ):
            chart = drawn[title]
            _sound(chart)
            assert len(chart.intervals) == 2
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_forest_and_overview_trends(stores, browser, width: int) -> None:
    with serve(stores["nightly"]) as address:
        for path in ("/compare", "/overview"):
            page = _visit(browser, f"{address}{path}", width)
            found = charts_on(page)
            assert found
            for chart in found:
                _sound(chart)
            page.close()
