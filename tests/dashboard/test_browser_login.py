"""End to end in headless Chromium against a real OpenID Connect provider running locally
(oidc-provider-mock): an anonymous visitor is sent to log in, a viewer sees the pages but
no triage controls, a triager quarantines the regressed P0 case, the next `evals run`
passes the gate that failed before and lists the quarantine, fails again after the
expiry, and the audit trail's export holds the action.

Skipped unless EVALS_TEST_CHROMIUM names a Chromium binary.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.dashboard.browser import CHROMIUM_ARGS, _wait_until_serving, free_port
from tests.dashboard.test_browser import CHROMIUM
from tests.triage_suite import P0_CASE, run_triage_suite, write_triage_suite

pytestmark = pytest.mark.browser

SECRETS = """
[auth]
redirect_uri = "http://localhost:{port}/oauth2callback"
cookie_secret = "a-cookie-secret-for-the-test-only"
client_id = "evals-dashboard"
client_secret = "not-a-secret"
server_metadata_url = "{provider}/.well-known/openid-configuration"

[evals_roles]
viewer_domains = ["example.com"]
triager_groups = ["evals-triagers"]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """(dashboard URL, suite file, store URL): the dashboard behind OIDC login over a store
    whose newest evaluation failed its P0 gate."""
    from oidc_provider_mock import User, run_server_in_thread

    folder = tmp_path_factory.mktemp("team")
    suite = write_triage_suite(folder)
    store = f"sqlite:///{folder / 'store.db'}"
    assert _run(suite, store) == 1
    users = [
        User(sub="ann", claims={"email": "ann@example.com", "email_verified": True}),
        User(
            sub="tom",
            claims={
                "email": "tom@example.com",
                "email_verified": True,
                "groups": ["evals-triagers"],
            },
        ),
    ]
    with run_server_in_thread(port=0, user_claims=users) as provider:
        port = free_port()
        (folder / ".streamlit").mkdir()
        (folder / ".streamlit" / "secrets.toml").write_text(
            SECRETS.format(port=port, provider=f"http://localhost:{provider.server_port}"),
            encoding="utf-8",
        )
        environment = {**os.environ, "HOME": str(folder), "AUTHLIB_INSECURE_TRANSPORT": "1"}
        environment.pop("EVALS_DASHBOARD_AUTH", None)
        process = subprocess.Popen(
            [sys.executable, "-m", "evals", "dashboard", "--store", store, "--port", str(port)],
            cwd=folder,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until_serving(port, process, 60)
            yield f"http://localhost:{port}", suite, store
        finally:
            process.terminate()
            process.wait(timeout=20)


def _settle(page) -> None:
    page.wait_for_load_state("networkidle")
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached")
    page.wait_for_timeout(800)


def _run(suite: Path, store: str) -> int:
    """`evals run` on a thread of its own: Playwright's event loop holds the main one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run_triage_suite, suite, store).result()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _log_in(browser, url: str, who: str):
    tab = browser.new_context(viewport={"width": 1440, "height": 1800}).new_page()
    tab.set_default_timeout(30_000)
    tab.goto(url)
    tab.get_by_role("button", name="Log in").wait_for()
    assert tab.get_by_text("Log in to see the results store.").is_visible()
    tab.get_by_role("button", name="Log in").click()
    tab.get_by_role("button", name=who, exact=True).click()  # the provider's page
    sidebar = tab.locator("[data-testid='stSidebar']")
    sidebar.get_by_text(f"{who}@example.com", exact=False).wait_for()
    _settle(tab)
    return tab


def test_an_anonymous_visitor_is_sent_to_log_in(browser, served) -> None:
    url, _, _ = served
    tab = browser.new_context().new_page()
    tab.goto(f"{url}/compare")
    tab.get_by_role("button", name="Log in").wait_for()
    _settle(tab)
    assert tab.get_by_role("heading", name="Compare").count() == 0
    assert tab.get_by_text("Log in to see the results store.").is_visible()
    tab.context.close()


@pytest.mark.slow
def test_a_viewer_sees_the_pages_but_no_triage_controls(browser, served) -> None:
    url, _, _ = served
    tab = _log_in(browser, url, "ann")
    sidebar = tab.locator("[data-testid='stSidebar']")
    assert sidebar.get_by_text("ann@example.com · viewer").is_visible()
    assert sidebar.get_by_role("link", name="Audit trail").count() == 1
    assert sidebar.get_by_role("link", name="Triage").count() == 0
    tab.goto(f"{url}/triage")
    _settle(tab)
    assert tab.get_by_role("button", name="Record").count() == 0
    tab.goto(url)
    tab.locator("[data-testid='stSidebar']").get_by_role("button", name="Log out").wait_for()
    _settle(tab)
    tab.locator("[data-testid='stSidebar']").get_by_role("button", name="Log out").click()
    tab.get_by_role("button", name="End session").click()  # the provider's end of session
    tab.goto(f"{url}/audit")
    tab.get_by_role("button", name="Log in").wait_for()
    assert tab.get_by_role("heading", name="Audit trail").count() == 0
    tab.context.close()


def test_a_triager_quarantines_and_the_next_run_honours_it(
    browser, served, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, suite, store = served
    tab = _log_in(browser, url, "tom")
    tab.locator("[data-testid='stSidebar']").get_by_role("link", name="Triage").click()
    tab.get_by_role("heading", name="Triage").wait_for()
    _settle(tab)
    tab.locator("[data-testid='stSelectbox']").filter(has_text="Case").click()
    tab.get_by_role("option", name=f"regression · {P0_CASE}").click()
    tab.get_by_label("Why").fill("<b>flaky</b> quote feed, fix in progress")
    tab.get_by_role("button", name="Record").click()
    tab.get_by_text("Recorded triage action 1.").wait_for()

    capsys.readouterr()
    assert _run(suite, store) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 case(s) quarantined, 0 expiring within a day" in out
    assert f"quarantined {P0_CASE} until" in out
    assert "by tom@example.com: <b>flaky</b> quote feed" in out

    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 8 * 86400)
    assert _run(suite, store) == 1
    monkeypatch.undo()

    tab.locator("[data-testid='stSidebar']").get_by_role("link", name="Audit trail").click()
    tab.get_by_role("heading", name="Audit trail").wait_for()
    _settle(tab)
    with tab.expect_download() as download:
        tab.get_by_role("button", name="Export CSV").click()
    exported = Path(download.value.path()).read_text(encoding="utf-8")
    assert "tom@example.com" in exported and "quarantine" in exported and P0_CASE in exported
    tab.context.close()


@pytest.mark.slow
def test_logging_out_refuses_a_copy_of_the_session_cookie(browser, served) -> None:
    url, _, _ = served
    tab = _log_in(browser, url, "ann")
    copied = tab.context.cookies()
    assert copied, "the login set no cookie"
    other = browser.new_context(viewport={"width": 1440, "height": 1800})
    other.add_cookies(copied)
    replay = other.new_page()
    replay.set_default_timeout(30_000)
    replay.goto(url)
    replay.locator("[data-testid='stSidebar']").get_by_text("ann@example.com").wait_for()

    tab.locator("[data-testid='stSidebar']").get_by_role("button", name="Log out").click()
    tab.get_by_role("button", name="End session").click()  # the provider's end of session
    tab.context.close()

    replay.goto(f"{url}/compare")
    replay.get_by_role("button", name="Log in").wait_for()
    _settle(replay)
    assert replay.get_by_role("heading", name="Compare").count() == 0
    assert replay.get_by_text("ann@example.com").count() == 0
    other.close()
