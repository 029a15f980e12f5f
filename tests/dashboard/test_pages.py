"""Every page of the dashboard, run with Streamlit's AppTest on a real demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evals.dashboard.comparison import Side
from evals.dashboard.selection import side_text

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture
def app(demo_store, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    url, _ = demo_store
    monkeypatch.setenv("EVALS_STORE_URL", url)
    return AppTest.from_file(APP, default_timeout=60)


def _ran_cleanly(app: AppTest) -> None:
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]


def _assertion_types(grade) -> set[str]:
    if grade is None:
        return set()
    found = set()
    for child in grade.component_results:
        found |= {(child.assertion or {}).get("type")} | _assertion_types(child)
    return found


def _metrics(app: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in app.metric}


def test_overview_lists_the_suite_and_its_latest_verdicts(app: AppTest, demo_store) -> None:
    _, (nightly, latest) = demo_store
    app.run()
    _ran_cleanly(app)
    assert app.title[0].value == "Overview"
    metrics = _metrics(app)
    assert metrics["Suites in the store"] == "1"
    assert metrics["Evaluations of this suite"] == "2"
    assert metrics["Latest verdict"] == latest.gates.verdict
    matrix = app.dataframe[0].value
    assert matrix.loc["trading-research", "nightly"] == nightly.gates.verdict
    assert matrix.loc["trading-research", "no environment"] == latest.gates.verdict
    assert app.selectbox(key="suite_picker").value == "trading-research"


def test_overview_filters_the_trend_by_environment(app: AppTest) -> None:
    app.run()
    app.segmented_control(key="overview_environment").set_value("nightly").run()
    _ran_cleanly(app)
    table = app.dataframe[-1].value
    assert set(table["environment"]) == {"nightly"}
    assert set(table["agent"]) == {"baseline", "candidate"}


def test_compare_defaults_to_the_latest_pair_of_evaluations(app: AppTest, demo_store) -> None:
    _, (nightly, latest) = demo_store
    app.switch_page("views/compare.py").run()
    _ran_cleanly(app)
    assert app.radio(key="compare_mode").value == "two evaluations"
    assert app.selectbox(key="compare_Baseline").value == nightly.meta.id
    assert app.selectbox(key="compare_Candidate").value == latest.meta.id
    assert app.query_params["candidate"] == side_text(Side(latest.meta.id, "candidate"))
    assert {"Baseline pass rate", "Candidate pass rate", "Gates"} <= set(_metrics(app))


def test_compare_of_one_evaluation_shows_its_stored_statistics(app: AppTest, demo_store) -> None:
    _, (_, latest) = demo_store
    app.switch_page("views/compare.py").run()
    app.radio(key="compare_mode").set_value("two agents of one evaluation").run()
    app.selectbox(key="compare_one").set_value(latest.meta.id).run()
    _ran_cleanly(app)
    overall = latest.summary.comparison.overall
    metrics = _metrics(app)
    assert metrics["Baseline pass rate"] == f"{overall.baseline_rate * 100:.1f} %"
    assert metrics["Candidate pass rate"] == f"{overall.candidate_rate * 100:.1f} %"
    assert metrics["Gates"] == latest.gates.verdict
    gates = app.dataframe[0].value
    assert list(gates["gate"]) == [g.name for g in latest.gates.gates]
    assert list(gates["reason"]) == [g.reason for g in latest.gates.gates]
    cases = app.dataframe[1].value
    assert len(cases) == len(latest.summary.comparison.cases)
    adjusted = cases["p_adjusted"].fillna(2.0).tolist()
    assert adjusted == sorted(adjusted)


def test_compare_filters_cases_by_tag_priority_and_grader(app: AppTest, demo_store) -> None:
    _, (_, latest) = demo_store
    app.switch_page("views/compare.py").run()
    app.multiselect(key="filter_tags").set_value(["noticias"]).run()
    app.multiselect(key="filter_priority").set_value(["P0"]).run()
    app.multiselect(key="filter_graders").set_value(["policy"]).run()
    _ran_cleanly(app)
    checked_by_policy = {
        r.key.case_id for r in latest.records if "policy" in _assertion_types(r.grade)
    }
    expected = {
        c.id
        for c in latest.suite.cases
        if "noticias" in c.tags and c.priority == "P0" and c.id in checked_by_policy
    }
    shown = app.dataframe[1].value
    assert expected
    assert set(shown["case"]) == expected


def test_case_shows_outputs_as_code_and_the_trajectory(app: AppTest, demo_store) -> None:
    _, (_, latest) = demo_store
    case_id = "ticker-desconocido-acme"
    app.query_params["case"] = case_id
    app.query_params["baseline"] = side_text(Side(latest.meta.id, "baseline"))
    app.query_params["candidate"] = side_text(Side(latest.meta.id, "candidate"))
    app.switch_page("views/case.py").run()
    _ran_cleanly(app)
    assert app.selectbox(key="case_picker").value == case_id
    outputs = {
        str(r.response.output)
        for r in latest.records
        if r.key.case_id == case_id and r.response.output is not None
    }
    codes = {c.value for c in app.code}
    assert outputs <= codes
    markdown = " ".join(m.value for m in app.markdown)
    assert not any(output in markdown for output in outputs)
    texts = " ".join(t.value for t in app.text)
    assert "tool · precio" in texts
    assert any('"ticker": "ACME"' in code for code in codes)
    assert any(code.startswith("error: ticker desconocido") for code in codes)
    repeats = {r.key.repeat for r in latest.records if r.key.case_id == case_id}
    assert len(app.tabs) == len(repeats)


def test_cost_and_latency_shows_stored_estimates_and_flaky_cases(app: AppTest, demo_store) -> None:
    _, (_, latest) = demo_store
    app.switch_page("views/cost_latency.py").run()
    app.selectbox(key="cost_evaluation").set_value(latest.meta.id).run()
    _ran_cleanly(app)
    p95 = [m.value for m in app.metric if m.label == "p95 latency"]
    assert p95 == [f"{a.p95_latency_ms:,.0f} ms" for a in latest.summary.agents]
    flaky = app.dataframe[-1].value if app.dataframe else None
    expected = sorted(
        (s for s in latest.summary.case_stats if s.flake), key=lambda s: (-s.flake, s.case_id)
    )
    if expected:
        assert list(flaky["case"]) == [s.case_id for s in expected]
    else:
        assert any("nothing is flaky" in i.value for i in app.info)
