"""The Case page shows two conversations side by side, turn by turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evals.dashboard.comparison import Side
from evals.dashboard.selection import side_text
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "dashboard" / "app.py")
CASE = "the-customer-corrects-the-order-number"


@pytest.fixture(scope="module")
def support_store(tmp_path_factory: pytest.TempPathFactory):
    url = f"sqlite:///{tmp_path_factory.mktemp('conversations')}/s.db"
    suite = load_suite(ROOT / "cases" / "support-desk")
    options = RunOptions(store_url=url, progress=False, repeat=3, case_ids=[CASE])
    return url, run_evaluation(suite, options)


@pytest.mark.slow
def test_the_case_page_compares_both_conversations_turn_by_turn(support_store, monkeypatch):
    url, result = support_store
    monkeypatch.setenv("EVALS_STORE_URL", url)
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["case"] = CASE
    app.query_params["baseline"] = side_text(Side(result.meta.id, "baseline"))
    app.query_params["candidate"] = side_text(Side(result.meta.id, "candidate"))
    app.switch_page("views/case.py").run()
    assert not app.exception, [e.value for e in app.exception]
    shown = " ".join(h.proto.body for h in app.html)
    assert "Conversations" in shown
    assert shown.count("class='evals-chat'") == 2
    assert "Sorry, I meant order A102, not A101." in shown
    failed = [r for r in result.records if r.key.agent == "candidate" and r.status != "pass"]
    assert failed  # it refunds unconfirmed in 80 % of these conversations
    # the page opens on the first failed repeat: its failing turn is marked, with the reason
    assert "<div class='turn failed'><div class='muted'>turn 2" in shown
    assert "write call without the user&#x27;s confirmation" in shown or (
        "write call without the user&#39;s confirmation" in shown
    )
