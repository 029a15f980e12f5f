"""The morning question in headless Chromium, on a history a team's project wrote with
`evals run` once a night: a refund bug at night 4, an inconclusive night 5, the suite
edited at night 7 (a case added, one removed) and a case redefined at night 8. On a
1366 × 768 laptop the landing page answers above the fold: the failing gates with their
cases linked (the P0 gate's among them), the regressions with since when, the night of
the bug named before and after the suite edit; the gates' full reasons are one click away.

Skipped unless EVALS_TEST_CHROMIUM names a Chromium binary.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dashboard.browser import ConsoleErrors, ScriptRuns, chromium, serve
from tests.dashboard.nightly_project import BREAKS, NIGHTS, SUITE_EDIT, build_history

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("EVALS_TEST_CHROMIUM")
if not CHROMIUM:
    pytest.skip("set EVALS_TEST_CHROMIUM to a Chromium binary", allow_module_level=True)

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
LAPTOP = {"width": 1366, "height": 768}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The store as it was the morning before the suite edit, and after every night."""
    folder = tmp_path_factory.mktemp("nights")
    store = folder / "store.db"
    build_history(folder / "project", f"sqlite:///{store}", range(1, SUITE_EDIT))
    shutil.copy(store, folder / "before.db")
    build_history(folder / "project", f"sqlite:///{store}", range(SUITE_EDIT, NIGHTS + 1))
    return {"before": f"sqlite:///{folder / 'before.db'}", "after": f"sqlite:///{store}"}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert CHROMIUM is not None
    with chromium(CHROMIUM) as launched:
        yield launched


def _above_the_fold(page: Any, text: str) -> bool:
    """Whether `text` is drawn within the first screen of the page (no scroll)."""
    found = page.locator("[data-testid='stMain']").get_by_text(text, exact=False).first
    box = found.bounding_box()
    return box is not None and box["y"] + box["height"] <= LAPTOP["height"]


@pytest.mark.parametrize("moment", ["before", "after"])
def test_the_laptop_first_view_answers_the_morning_question(
    stores: dict[str, str], browser: Any, moment: str
) -> None:
    newest = SUITE_EDIT - 1 if moment == "before" else NIGHTS
    with serve(stores[moment]) as address:
        page = browser.new_page(viewport=LAPTOP)
        page.set_default_timeout(120_000)
        runs, errors = ScriptRuns(page), ConsoleErrors(page)
        runs.after(lambda: page.goto(address))
        answer = page.locator(".evals-answer")
        text = answer.inner_text()
        assert f"(night-{newest:02d})" in text
        assert "Gates that did not pass" in text and "p0_regressions" in text
        tag_line = next(line for line in text.splitlines() if line.startswith("tag refunds"))
        streak = newest - BREAKS + 1
        assert f"since 2026-03-0{4 + BREAKS} 03:00" in tag_line
        assert f"(night-{BREAKS:02d}), {streak} evaluations" in tag_line
        for case in ("refunds-question-refund-1", "account-question-account-0"):
            link = answer.get_by_role("link", name=case).first
            assert "case=" + case in (link.get_attribute("href") or "")
        p0_line = next(
            line
            for line in text.splitlines()
            if "account-question-account-0" in line and "P0 gate" in line
        )
        assert "since" in p0_line
        for shown in ("gates: fail", "Gates that did not pass", "tag refunds", "P0 gate failed"):
            assert _above_the_fold(page, shown), f"{shown!r} needs a scroll at 1366 × 768"
        detail = page.get_by_text("Statistical detail: each gate's full reason")
        assert _above_the_fold(page, "Statistical detail")
        detail.click()
        page.get_by_text("loss shown on", exact=False).first.wait_for()
        if moment == "after":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            detail.click()
            page.wait_for_timeout(500)
            page.screenshot(path=str(SCREENSHOTS / "what-changed-laptop.png"))
        assert errors.unexpected() == []
        page.close()


def test_a_p0_case_opens_on_its_case_page(stores: dict[str, str], browser: Any) -> None:
    with serve(stores["after"]) as address:
        page = browser.new_page(viewport=LAPTOP)
        page.set_default_timeout(120_000)
        runs, errors = ScriptRuns(page), ConsoleErrors(page)
        runs.after(lambda: page.goto(address))
        link = page.locator(".evals-answer").get_by_role("link", name="account-question-account-0")
        runs.after(lambda: link.first.click())
        main = page.locator("[data-testid='stMain']")
        assert "/case?" in page.url and "account-question-account-0" in page.url
        assert main.get_by_text("Failing assertion:").first.is_visible()
        assert errors.unexpected() == []
        page.close()
