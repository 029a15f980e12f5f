"""Pages of a 500-case suite in headless Chromium: number axes (of SVG and Vega-Lite
charts) never repeat a label, a click on a trend point opens that evaluation's comparison,
and Runs filters by metadata.

Skipped unless EVALS_TEST_CHROMIUM names a Chromium binary.
"""

from __future__ import annotations

import base64
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from benchmarks.dashboard_scale import fill
from evals.store import open_store
from tests.dashboard.browser import ConsoleErrors, ScriptRuns, serve

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("EVALS_TEST_CHROMIUM")
if not CHROMIUM:
    pytest.skip("set EVALS_TEST_CHROMIUM to a Chromium binary", allow_module_level=True)

CASES = 500
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def dashboard_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`evals dashboard` on 4 evaluations of a 500-case suite (nightly: scale-0001, -0002)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('scale')}/s.db"
    store = open_store(url)
    fill(store, evaluations=4, cases=CASES, repeats=1)
    store.close()
    with serve(url) as address:
        yield address


@pytest.fixture
def tab(browser: Any) -> Iterator[tuple[Any, ScriptRuns]]:
    """A fresh page at desktop size, its script runs; it must log no console error."""
    page = browser.new_page(viewport={"width": 1440, "height": 1800})
    page.set_default_timeout(120_000)
    runs, errors = ScriptRuns(page), ConsoleErrors(page)
    yield page, runs
    page.close()
    assert errors.unexpected() == []


def _number_axes(page: Any) -> list[tuple[str, list[str]]]:
    """(description, tick labels) of every number axis of every chart on the page."""
    axes = []
    for source in page.locator("figure.evals-chart img").evaluate_all(
        "images => images.map(image => image.src)"
    ):
        # Each chart's picture is its SVG, as the browser drew it.
        picture = ET.fromstring(base64.b64decode(source.split(",", 1)[1]))
        for axis in picture.iter(f"{SVG}g"):
            if axis.get("class") == "axis number-axis":
                texts = [t.text or "" for t in axis.iter(f"{SVG}text") if t.get("class") == "tick"]
                axes.append((axis.get("aria-label") or "", texts))
    for axis in page.locator("[data-testid='stVegaLiteChart'] g.role-axis").all():
        label = axis.get_attribute("aria-label") or ""
        if "linear scale" in label:
            texts = [t.text_content() for t in axis.locator("g.role-axis-label text").all()]
            axes.append((label, texts))
    return axes


@pytest.mark.slow
@pytest.mark.parametrize("path", ["overview", "compare", "cost_latency"])
def test_number_axes_never_repeat_a_label(tab, dashboard_url: str, path: str) -> None:
    page, runs = tab
    # Wide charts get many ticks: where the data's range is narrow, finer than the labels.
    page.set_viewport_size({"width": 2560, "height": 1600})
    runs.after(lambda: page.goto(f"{dashboard_url}/{path}"))
    if path == "cost_latency":
        runs.after(lambda: page.get_by_text("Interactive charts").click())
    axes = _number_axes(page)
    assert axes, "the page drew no number axis"
    for description, labels in axes:
        assert len(labels) >= 2, description
        assert len(set(labels)) == len(labels), (description, labels)


def test_a_click_on_a_trend_point_opens_its_evaluation(tab, dashboard_url: str) -> None:
    page, runs = tab
    runs.after(lambda: page.goto(f"{dashboard_url}/overview"))
    trend = page.locator("figure.evals-chart").first
    points = trend.locator("a.point").all()
    oldest = min(points, key=lambda point: point.bounding_box()["x"])
    assert "evaluation: scale-0001" in (oldest.get_attribute("title") or "")
    runs.after(lambda: oldest.click())
    page.wait_for_url(re.compile(r"/compare\?"))
    # The page opens on the newest nightly (scale-0002); the oldest point is scale-0001.
    opened = "Baseline: scale-0001:baseline · Candidate: scale-0001:candidate"
    page.get_by_text(opened).wait_for()
    assert "baseline=scale-0001" in page.url


def test_runs_filter_by_case_and_run_metadata(tab, dashboard_url: str) -> None:
    page, runs = tab
    address = f"{dashboard_url}/runs?evaluation=scale-0002&meta={quote('priority=P0')}"
    runs.after(lambda: page.goto(address))
    main = page.locator("[data-testid='stMain']")
    p0_runs = (CASES // 25) * 2  # every 25th case is P0; two agents, one repeat
    assert f"{p0_runs:,} runs match" in main.inner_text()
    box = page.locator("input[aria-label='Metadata']")
    assert box.input_value() == "priority=P0"
    box.fill("priority=P0, model=sim-2")
    runs.after(lambda: box.press("Enter"))
    assert f"{p0_runs // 2:,} runs match" in main.inner_text()
    assert "meta=" in page.url
    box.fill("model=sim-1")
    runs.after(lambda: box.press("Enter"))
    assert f"{CASES:,} runs match" in main.inner_text()
    box.fill("priority")
    runs.after(lambda: box.press("Enter"))
    assert "'priority' is not key=value" in main.inner_text()
