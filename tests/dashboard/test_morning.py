"""The morning question in headless Chromium: on a multi-day store whose candidate starts
regressing on tag `noticias` at a known nightly, the landing page names the regression and
its first commit, two clicks reach the failing assertion's reason and the trajectory, and
a Compare address with filters reproduces the same view. No page logs a console error.

Skipped unless EVALS_TEST_CHROMIUM names a Chromium binary.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.synthetic_history import REGRESSION_NIGHT, commit, morning_history
from tests.dashboard.browser import ConsoleErrors, ScriptRuns, serve

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("EVALS_TEST_CHROMIUM")
if not CHROMIUM:
    pytest.skip("set EVALS_TEST_CHROMIUM to a Chromium binary", allow_module_level=True)

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"

# The reason the synthetic candidate's `contains` assertion gives once it follows headlines.
FULL_REASON = (
    "Expected output to contain '6.45 %' computed from the closing prices the precio tool "
    "returned for 2024-03-15 (25.88) and 2024-03-22 (27.55); the output gives 27.88 % taken "
    "from a headline, and never called precio for the end date"
)


@pytest.fixture(scope="module")
def dashboard_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`evals dashboard` serving the morning history (16 evaluations over 8 days)."""
    store = f"sqlite:///{tmp_path_factory.mktemp('morning')}/s.db"
    morning_history(store)
    with serve(store) as address:
        yield address


def _open(browser: Any) -> tuple[Any, ScriptRuns, ConsoleErrors]:
    page = browser.new_page(viewport={"width": 1440, "height": 1800})
    page.set_default_timeout(120_000)
    return page, ScriptRuns(page), ConsoleErrors(page)


@pytest.fixture
def tab(browser: Any) -> Iterator[tuple[Any, ScriptRuns]]:
    """A fresh page at desktop size, its script runs; it must log no console error."""
    page, runs, errors = _open(browser)
    yield page, runs
    page.close()
    assert errors.unexpected() == []


def _shoot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def _main(page: Any) -> Any:
    return page.locator("[data-testid='stMain']")


def test_landing_names_the_regression_and_its_first_commit(tab, dashboard_url: str) -> None:
    page, runs = tab
    runs.after(lambda: page.goto(dashboard_url))
    text = _main(page).inner_text()
    assert "What changed · trading-research · nightly" in text
    assert "gates: fail" in text
    assert "p0_regressions" in text
    assert text.index("Regressions") < text.index("tag noticias") < text.rindex("Improvements")
    card = text[text.index("tag noticias") :].split("When:", 1)[1].split("\n", 1)[0]
    assert commit(REGRESSION_NIGHT)[:10] in card
    assert f"tr-nightly-{REGRESSION_NIGHT}" in card
    assert f"tr-nightly-{REGRESSION_NIGHT - 1}" in card
    _shoot(page, "what-changed")


def test_two_clicks_reach_the_failing_reason_and_trajectory(tab, dashboard_url: str) -> None:
    page, runs = tab
    runs.after(lambda: page.goto(dashboard_url))
    runs.after(lambda: page.get_by_role("link", name="Open case").first.click())
    main = _main(page)
    assert main.get_by_role("heading", name="Case").is_visible()
    assert main.get_by_text("Failing assertion:").first.is_visible()
    assert main.get_by_text(FULL_REASON, exact=True).first.is_visible()
    assert main.get_by_text("tool buscar_noticias", exact=True).first.is_visible()
    assert "/case?" in page.url and "case=" in page.url
    _shoot(page, "case")


def test_compare_opens_on_the_gates_comparison_regressions_first(tab, dashboard_url: str) -> None:
    page, runs = tab
    runs.after(lambda: page.goto(f"{dashboard_url}/compare"))
    text = _main(page).inner_text()
    newest = "tr-nightly-8"
    assert f"Baseline: {newest}:baseline · Candidate: {newest}:candidate" in text
    assert "Regressed cases (3)" in text
    _shoot(page, "compare")


@pytest.mark.slow
def test_a_permalink_reproduces_a_filtered_compare_view(tab, browser, dashboard_url: str) -> None:
    page, runs = tab
    runs.after(lambda: page.goto(f"{dashboard_url}/compare"))
    page.locator("[data-testid='stMultiSelect']").filter(has_text="Verdict").click()
    page.keyboard.type("regression")  # the typed text narrows the options to the one wanted
    runs.after(lambda: page.get_by_role("option", name="regression").click())
    page.keyboard.press("Escape")
    search = page.locator("input[aria-label='Search']")
    search.fill("busi")
    runs.after(lambda: search.press("Enter"))
    assert "verdict=regression" in page.url and "q=busi" in page.url
    filtered = _main(page).inner_text()
    assert "regression: 1" in filtered and "inconclusive: 0" in filtered

    other, other_runs, errors = _open(browser)
    other_runs.after(lambda: other.goto(page.url))
    reopened = _main(other).inner_text()
    assert "regression: 1" in reopened and "inconclusive: 0" in reopened
    assert "titulares-citados-busi-2024-03-18-2024-03-20" in reopened
    assert other.locator("input[aria-label='Search']").input_value() == "busi"
    other.close()
    assert errors.unexpected() == []
