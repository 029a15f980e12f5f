"""The team pages with Streamlit's AppTest on a real store: triage through the one audited
write path, the audit trail, what a viewer without the triager role gets, and user text
shown as text."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evals.store import open_store
from tests.dashboard.conftest import run_demo

pytestmark = pytest.mark.slow

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
HOSTILE = "<script>alert(1)</script> **bold** [x](javascript:alert(1)) =HYPERLINK(1)"


@pytest.fixture(scope="module")
def team_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('team-store')}/s.db"
    run_demo(url, repeat=2)
    return url


@pytest.fixture
def app(team_store: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("EVALS_STORE_URL", team_store)
    return AppTest.from_file(APP, default_timeout=60)


def _ran_cleanly(app: AppTest) -> None:
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]


def _shown_as_markup(app: AppTest) -> list[str]:
    return [m.value for m in app.markdown if "alert(1)" in m.value]


def test_a_triager_quarantines_a_case_and_the_audit_trail_shows_it(
    app: AppTest, team_store: str
) -> None:
    app.switch_page("views/triage.py").run()
    _ran_cleanly(app)
    case_id = app.selectbox(key="triage_case").options[1].split(" · ")[-1]
    app.selectbox(key="triage_case").set_value(case_id)
    app.selectbox(key="triage_env").set_value("nightly")
    app.text_area(key="triage_reason").set_value(HOSTILE)
    app.text_input(key="triage_link").set_value("https://example.com/issue/7")
    app.button[0].click().run()
    _ran_cleanly(app)
    assert any("Recorded triage action" in s.value for s in app.success)

    store = open_store(team_store)
    (action,) = store.triage.current(None, now=0.0)
    store.close()
    assert (action.kind, action.case_id, action.environment) == ("quarantine", case_id, "nightly")
    assert action.reason == HOSTILE and action.actor.endswith("(local)")
    assert action.until is not None

    app.switch_page("views/audit.py").run()
    _ran_cleanly(app)
    table = app.dataframe[0].value
    assert list(table["why"]) == [HOSTILE]
    assert list(table["action"]) == ["quarantine"]
    assert _shown_as_markup(app) == []


def test_the_audit_export_quotes_formulas_and_keeps_text() -> None:
    from evals.dashboard.triage import csv_bytes, frame
    from evals.model.triage import TriageAction

    actions = [
        TriageAction("acknowledge", "s", "=cmd|' /C calc'!A0", HOSTILE, 0.0, gate="regression"),
        TriageAction("acknowledge", "s", "bob", "+1 known", 0.0, gate="regression"),
    ]
    rows = csv_bytes(frame(actions, 0.0)).decode().splitlines()
    assert ",'=cmd|' /C calc'!A0," in rows[1]
    assert f",{HOSTILE}," in rows[1]
    assert ",'+1 known," in rows[2]


def test_anonymous_viewers_get_no_triage_controls(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_DASHBOARD_AUTH", "insecure")
    app.run()
    _ran_cleanly(app)
    assert "anonymous · viewer" in [c.value for c in app.sidebar.caption]
    app.switch_page("views/audit.py").run()
    _ran_cleanly(app)
    assert "Triage" not in [c.value for c in app.sidebar.caption]
    app.switch_page("views/triage.py").run()
    assert any("Triage needs the triager role" in e.value for e in app.error)
    assert not [b for b in app.button if b.label in ("Record", "Remove")]


def test_the_write_path_refuses_a_viewer_whatever_the_page(team_store: str) -> None:
    from evals.dashboard.auth import Visitor
    from evals.dashboard.triage import submit, withdraw

    viewer = Visitor("ann", "ann@example.com", frozenset({"viewer"}), "oidc")
    with pytest.raises(PermissionError, match=r"ann@example\.com may not"):
        submit(viewer, team_store, "acknowledge", "trading-research", "r", gate="regression")
    with pytest.raises(PermissionError):
        withdraw(viewer, team_store, 1, "r")


def test_an_unconfigured_server_on_all_interfaces_shows_nothing(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALS_DASHBOARD_AUTH")
    app.run()
    assert "refusing to serve the dashboard" in app.error[0].value
    assert not app.title
