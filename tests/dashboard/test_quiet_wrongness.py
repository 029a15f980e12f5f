"""What the dashboard must never get quietly wrong: a stale link says so, an export holds
every matching row and no formula, every choice is in the address, a viewer is told what
triage needs, labels use one unit and name their correction, a logged-out session stays
out. Pages run with Streamlit's AppTest on a store a user's own project wrote."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from evals.cli import main
from evals.dashboard import sessions, theme, widgets
from evals.store import open_store
from evals.store.dashboard_queries import DashboardQueries

pytestmark = pytest.mark.slow

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
AGENT = """
def steady(prompt, options, context):
    return {"output": "=HYPERLINK(\\"http://x\\") total: 42 EUR"}


def flaky(prompt, options, context):
    n = context["vars"]["n"]
    return {"output": "total: 41 EUR" if context["repeat"] < n % 4 else "total: 42 EUR"}
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 20-case suite of a user's own agents, both `contains` assertions of a case failing
    together, run once into a fresh store."""
    folder = tmp_path_factory.mktemp("quiet")
    (folder / "my_agents.py").write_text(AGENT, encoding="utf-8")
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n"
        f"    metadata: {{priority: {'P0' if n == 0 else 'P2'}, tags: [t{n % 3}]}}\n"
        "    assert: [{type: contains, value: '42'}, {type: contains, value: '42 EUR'}]"
        for n in range(20)
    )
    (folder / "evals.yaml").write_text(
        "description: quiet\n"
        "prompts: ['How much is order {{n}}?']\n"
        "providers:\n"
        "  - {id: file://my_agents.py:steady, label: base}\n"
        "  - {id: file://my_agents.py:flaky, label: cand}\n"
        "evaluateOptions: {repeat: 4}\n"
        "gates: {baseline: base, candidate: cand, max_error_rate: null}\n"
        f"tests:\n{tests}\n",
        encoding="utf-8",
    )
    url = f"sqlite:///{folder / 'store.db'}"
    main(["run", str(folder / "evals.yaml"), "--store", url, "--no-progress", "--env", "nightly"])
    return url


@pytest.fixture
def app(store: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("EVALS_STORE_URL", store)
    monkeypatch.setenv("EVALS_DASHBOARD_AUTH", "local")
    return AppTest.from_file(APP, default_timeout=90)


def _evaluation(store: str) -> str:
    opened = open_store(store)
    try:
        return opened.list_evaluations(limit=1)[0].id
    finally:
        opened.close()


def test_a_stale_case_link_says_so_and_opens_no_other_case(app: AppTest) -> None:
    app.query_params["case"] = "no-such-case"
    app.switch_page("views/case.py").run()
    assert not app.exception
    assert any("names case 'no-such-case'" in e.value for e in app.error)
    assert [s for s in app.selectbox if s.key == "case_picker"] == []  # none in its place
    assert app.query_params["case"] == ["no-such-case"] or app.query_params["case"] == (
        "no-such-case"
    )


def test_a_stale_evaluation_link_says_so(app: AppTest) -> None:
    app.query_params["evaluation"] = "gone-123"
    app.switch_page("views/runs.py").run()
    assert any("names evaluation 'gone-123'" in w.value for w in app.warning)


def test_a_viewer_opening_triage_is_told_it_needs_the_triager_role(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_DASHBOARD_AUTH", "insecure")
    app.switch_page("views/triage.py").run()
    assert any("Triage needs the triager role" in e.value for e in app.error)
    assert not app.button


def test_the_runs_export_holds_every_matching_run_and_no_formula(store: str) -> None:
    queries = DashboardQueries(open_store(store, read_only=True).engine)
    evaluation_id = _evaluation(store)
    page = queries.search_runs(evaluation_id, text="hyperlink", limit=100)
    every = queries.search_runs(evaluation_id, text="hyperlink", limit=None)
    assert page["total"] == len(every["rows"]) == 80 > 0
    assert all(row["prompt"].startswith("How much is order") for row in every["rows"])
    text = widgets.csv_text(pd.DataFrame.from_records(every["rows"]))
    read = pd.read_csv(io.StringIO(text))
    assert len(read) == 80
    assert all(cell.startswith("'=HYPERLINK") for cell in read["output"])


@given(st.text(max_size=30))
def test_no_exported_cell_starts_a_formula(value: str) -> None:
    text = widgets.csv_text(pd.DataFrame({"cell": [value]}))
    cell = text.split("\n", 1)[1].lstrip('"')
    stripped = cell.lstrip(" \t\r\n\u200b\u200c\u200d")
    if stripped[:1] in ("=", "@"):
        assert cell.startswith("'")


def test_a_failing_assertion_counts_runs_not_checks(store: str) -> None:
    queries = DashboardQueries(open_store(store, read_only=True).engine)
    rows = queries.failing_assertions(_evaluation(store), "cand")
    for row in rows:
        n = int(row["case_id"].rsplit("-", 1)[-1]) - 1  # case-1 holds n = 0
        assert row["failures"] == n % 4


def test_audit_filters_and_the_cost_evaluation_are_kept_in_the_address(
    app: AppTest, store: str
) -> None:
    app.query_params["action"] = "quarantine"
    app.query_params["who"] = "ali"
    app.query_params["since"] = "2026-01-02"
    app.switch_page("views/audit.py").run()
    assert not app.exception
    assert app.multiselect(key="filter_action").value == ["quarantine"]
    assert app.text_input(key="filter_who").value == "ali"
    assert str(app.date_input(key="filter_since").value) == "2026-01-02"

    evaluation_id = _evaluation(store)
    app.query_params.clear()
    app.query_params["evaluation"] = evaluation_id
    app.switch_page("views/cost_latency.py").run()
    assert app.selectbox(key="cost_evaluation").value == evaluation_id
    assert app.query_params["evaluation"] in (evaluation_id, [evaluation_id])


def test_labels_use_one_unit_and_name_their_correction(app: AppTest) -> None:
    app.switch_page("views/compare.py").run()
    assert not app.exception
    shown = " ".join(h.proto.body for h in app.html)
    assert "pts" not in shown
    assert re.search(r"[+−-]\d+\.\d pp", shown)
    assert "q (BH)" in shown and "0.0000" not in shown
    assert theme.q_text(3.05e-05) == "3.05e-05" and theme.q_text(0.0) == "0.00e+00"
    assert theme.q_text(0.0123) == "0.0123"
    assert theme.q_label("tag") == "q (Holm)"
    assert theme.hex_colour("insufficient data") != theme.hex_colour("inconclusive")


def test_a_logged_out_session_is_refused_until_it_expires(tmp_path: Path) -> None:
    claims = {"iss": "https://id", "sub": "ann", "iat": 1000.0, "nonce": "n1"}
    again = {**claims, "iat": 2000.0, "nonce": "n2"}
    path = tmp_path / "state" / "revoked.jsonl"
    revocations = sessions.Revocations(path)
    revocations.revoke(sessions.session_key(claims), until=5000.0, now=1500.0)
    other_process = sessions.Revocations(path)
    assert other_process.is_revoked(sessions.session_key(dict(claims)), now=1600.0)
    assert not other_process.is_revoked(sessions.session_key(again), now=1600.0)
    assert not other_process.is_revoked(sessions.session_key(claims), now=5001.0)
    revocations.revoke(sessions.session_key(again), until=9000.0, now=6000.0)
    assert [line for line in path.read_text().splitlines() if line].__len__() == 1
    assert path.stat().st_mode & 0o777 == 0o600
