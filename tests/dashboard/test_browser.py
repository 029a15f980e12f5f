"""End to end: `evals dashboard` on a real demo store, driven in headless Chromium.

Skipped unless EVALS_TEST_CHROMIUM names a Chromium binary. Saves a screenshot of each
page under artifacts/screenshots/.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dashboard.browser import CHROMIUM_ARGS, ScriptRuns, serve
from tests.dashboard.conftest import run_demo

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("EVALS_TEST_CHROMIUM")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
# With 8 repeats the demo's candidate shows significant regressions on injected
# instructions in headlines (its news summaries follow them).
REPEATS = 8

if not CHROMIUM:
    pytest.skip("set EVALS_TEST_CHROMIUM to a Chromium binary", allow_module_level=True)


@pytest.fixture(scope="module")
def dashboard_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of `evals dashboard` serving a store with one demo evaluation."""
    store = f"sqlite:///{tmp_path_factory.mktemp('browser-store')}/s.db"
    run_demo(store, repeat=REPEATS)
    with serve(store) as address:
        yield address


@pytest.fixture(scope="module")
def page(dashboard_url: str) -> Iterator:
    """A Chromium page at desktop size."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1440, "height": 2200})
        tab.set_default_timeout(120_000)
        yield tab
        browser.close()


def _shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _open(page, address: str) -> ScriptRuns:
    runs = ScriptRuns(page)
    runs.after(lambda: page.goto(address))
    return runs


@pytest.mark.slow
def test_overview_shows_verdicts_and_trends(page, dashboard_url: str) -> None:
    runs = _open(page, f"{dashboard_url}/overview")
    assert page.get_by_text("Latest verdict per environment").is_visible()
    charts = page.locator("figure.evals-chart")
    assert charts.count() >= 3
    for chart in charts.all():
        picture = chart.locator("img")
        assert (picture.get_attribute("alt") or "").startswith(chart.get_attribute("aria-label"))
        assert picture.evaluate("image => image.complete && image.naturalWidth > 0")
        points = chart.locator("a.point")
        assert points.count() >= 1
        assert "evaluation: " in (points.first.get_attribute("title") or "")
        assert points.first.is_visible()
    assert "trading-research" in page.content()
    _shoot(page, "overview")
    runs.after(lambda: page.get_by_text("Interactive charts").click())
    assert page.locator("[data-testid='stVegaLiteChart']").count() >= 3


def test_compare_badges_the_regressed_case(page, dashboard_url: str) -> None:
    runs = _open(page, f"{dashboard_url}/compare")
    assert page.locator("figure.evals-chart .point").count() >= 1
    assert page.get_by_text("regression:", exact=False).first.is_visible()
    count = page.get_by_text("regression:", exact=False).first.inner_text()
    assert int(count.split(":")[1]) >= 1
    table = page.locator("table.paged-table")
    assert table.locator("th").first.inner_text() == "verdict"
    first = table.locator("tbody tr").first
    assert first.locator("td").first.inner_text() == "regression"
    assert "case=" in (first.locator("a").first.get_attribute("href") or "")
    assert page.locator("[data-testid='stDataFrame']").count() == 0
    _shoot(page, "compare")
    runs.after(lambda: page.get_by_text("Every column, sortable").click())
    page.locator("[data-testid='stDataFrame']").last.wait_for()


def test_case_shows_the_trajectory_of_a_regressed_case(page, dashboard_url: str) -> None:
    case = "instrucción-inyectada-en-un-titular-busi"
    _open(page, f"{dashboard_url}/case?case={case}")
    body = page.locator("[data-testid='stMain']")
    assert body.get_by_text("regression", exact=True).first.is_visible()
    assert body.get_by_text("Why the candidate fails").is_visible()
    assert body.get_by_text("tool buscar_noticias", exact=True).first.is_visible()
    _shoot(page, "case")


def test_cost_and_latency_page(page, dashboard_url: str) -> None:
    runs = ScriptRuns(page)
    runs.after(lambda: page.goto(f"{dashboard_url}/cost_latency"))
    assert page.get_by_text("p95 latency", exact=False).first.is_visible()
    assert page.get_by_text("Flaky cases, most flaky first").is_visible()
    assert page.locator("[data-testid='stVegaLiteChart']").count() == 0
    assert page.locator("figure.evals-chart img").count() == 4  # drawn on the server
    charts = page.get_by_text("Interactive charts")
    runs.after(charts.click)
    assert page.locator("[data-testid='stVegaLiteChart']").count() >= 4
    _shoot(page, "cost-latency")
