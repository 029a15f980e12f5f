"""Every page of the dashboard, run with Streamlit's AppTest on a real demo store."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evals.dashboard import changes
from evals.dashboard.comparison import Side
from evals.dashboard.selection import side_text
from evals.store import open_store

pytestmark = pytest.mark.slow

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
    """The page's large figures: its metrics and its tiles (`widgets.tiles_html`)."""
    tiles = re.findall(r'<div class="label">([^<]+)</div><div class="value">([^<]*)<', _html(app))
    return {m.label: m.value for m in app.metric} | {
        html.unescape(k): html.unescape(v) for k, v in tiles
    }


def _html(app: AppTest) -> str:
    return " ".join(h.proto.body for h in app.html)


def _paged_rows(app: AppTest) -> list[dict[str, str]]:
    """The rows of the page's paged HTML table, as {header: cell text}."""
    body = next(h.proto.body for h in app.html if "paged-table" in h.proto.body)
    head = [html.unescape(h) for h in re.findall(r'<th scope="col">([^<]*)</th>', body)]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>", 1)[1], flags=re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        texts = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in cells]
        rows.append(dict(zip(head, texts, strict=True)))
    return rows


def test_what_changed_opens_on_the_nightly_with_its_failing_gates(app: AppTest, demo_store) -> None:
    _, (nightly, _) = demo_store
    app.run()
    _ran_cleanly(app)
    assert app.title[0].value == "What changed · trading-research · nightly"
    assert app.selectbox(key="environment_picker").value == "nightly"
    shown = _html(app)
    failing = [g for g in nightly.gates.gates if g.status in ("fail", "undetermined")]
    for gate in failing:
        assert html.escape(gate.reason) in shown
    cases = nightly.summary.comparison.cases
    gated = changes.p0_failures(nightly.gates.to_dict(), [c.case_id for c in cases])
    regressed = [c for c in cases if c.verdict == "regression" or c.case_id in gated] + [
        t for t in nightly.summary.comparison.tags if t.verdict == "regression"
    ]
    heading = f"Regressions ({len(regressed)})" if regressed else "Regressions: none"
    assert f"<b>{heading}</b>" in shown


def test_overview_lists_the_suite_and_its_latest_verdicts(app: AppTest, demo_store) -> None:
    _, (nightly, latest) = demo_store
    app.switch_page("views/overview.py").run()
    _ran_cleanly(app)
    assert app.title[0].value == "Overview"
    metrics = _metrics(app)
    assert metrics["Suites in the store"] == "1"
    assert metrics["Evaluations of this suite"] == "2"
    assert metrics["Latest verdict"] == latest.gates.verdict
    matrix = next(h.proto.body for h in app.html if "<th>suite</th>" in h.proto.body)
    head, row = matrix.split("</tr>")[:2]
    columns = re.findall(r"<th>([^<]*)</th>", head)
    cells = dict(zip(columns, re.findall(r"<td[^>]*>(?:<span[^>]*>)?([^<]*)", row), strict=True))
    assert cells["suite"] == "trading-research"
    assert cells["nightly"] == nightly.gates.verdict
    assert cells["no environment"] == latest.gates.verdict
    assert app.selectbox(key="suite_picker").value == "trading-research"
    store = open_store(demo_store[0])
    try:
        found = store.baselines("trading-research", branch="main")
        why = store.baseline_statuses(found[:1])
    finally:
        store.close()
    expected = (
        f"Baseline of main: {found[0].id} ({why[found[0].id].reason})"
        if found
        else "No baseline yet: no nightly of main has earned it"
    )
    assert html.escape(expected) in _html(app)


def test_overview_trends_one_environment_and_one_tag(app: AppTest, demo_store) -> None:
    _, (nightly, latest) = demo_store
    app.switch_page("views/overview.py").run()
    assert not app.dataframe
    app.toggle(key="trend_table").set_value(True).run()
    table = app.dataframe[-1].value
    assert set(table["evaluation"]) == {nightly.meta.id}
    app.selectbox(key="environment_picker").set_value("none").run()
    _ran_cleanly(app)
    assert set(app.dataframe[-1].value["evaluation"]) == {latest.meta.id}
    app.selectbox(key="trend_subject").set_value("tag:noticias").run()
    _ran_cleanly(app)
    assert app.query_params["trend"] == "tag:noticias"
    assert not app.dataframe
    decided = next(h.proto.body for h in app.html if "verdict of the comparison" in h.proto.body)
    tag = next(t for t in latest.summary.comparison.tags if t.group == "noticias")
    assert latest.meta.id in decided
    assert re.findall(r'class="tag"[^>]*>([^<]*)</span>', decided) == [tag.verdict]
    chart = next(h.proto.body for h in app.html if "evals-chart" in h.proto.body)
    assert f"open={latest.meta.id}" in chart and "tag=noticias" in chart


def test_overview_trends_one_case_picked_on_demand_and_from_the_address(
    demo_store, monkeypatch
) -> None:
    url, (_, latest) = demo_store
    monkeypatch.setenv("EVALS_STORE_URL", url)
    app = AppTest.from_file(APP, default_timeout=60)
    app.switch_page("views/overview.py").run()
    _ran_cleanly(app)
    # The hundreds of cases are not options of the first picker; they get their own.
    subjects = app.selectbox(key="trend_subject").options
    assert "a case…" in subjects and not any(s.startswith("case ") for s in subjects)
    assert not [s for s in app.selectbox if s.key == "trend_case"]
    app.selectbox(key="environment_picker").set_value("none").run()
    app.selectbox(key="trend_subject").set_value("case").run()
    _ran_cleanly(app)
    cases = app.selectbox(key="trend_case").options
    case_id = "ticker-desconocido-acme"
    assert case_id in cases and len(cases) == len(latest.suite.cases)
    app.selectbox(key="trend_case").set_value(case_id).run()
    _ran_cleanly(app)
    assert app.query_params["trend"] == f"case:{case_id}"
    chart = next(h.proto.body for h in app.html if "evals-chart" in h.proto.body)
    assert f"Trend of case {case_id}" in chart and f"case={case_id}" in chart
    reopened = AppTest.from_file(APP, default_timeout=60)
    for key, value in app.query_params.items():
        reopened.query_params[key] = value
    reopened.switch_page("views/overview.py").run()
    _ran_cleanly(reopened)
    assert reopened.selectbox(key="trend_subject").value == "case"
    assert reopened.selectbox(key="trend_case").value == case_id


def test_compare_opens_on_the_comparison_the_gates_made(app: AppTest, demo_store) -> None:
    _, (nightly, _) = demo_store
    app.switch_page("views/compare.py").run()
    _ran_cleanly(app)
    assert app.query_params["candidate"] == side_text(Side(nightly.meta.id, "candidate"))
    # The side pickers are drawn on demand, on the comparison shown.
    assert not app.radio and not [s for s in app.selectbox if s.key == "compare_one"]
    app.toggle(key="compare_choose").set_value(True).run()
    _ran_cleanly(app)
    assert app.radio(key="compare_mode").value == "two agents of one evaluation"
    assert app.selectbox(key="compare_one").value == nightly.meta.id
    assert app.query_params["candidate"] == side_text(Side(nightly.meta.id, "candidate"))
    overall = nightly.summary.comparison.overall
    metrics = _metrics(app)
    assert metrics["Baseline pass rate"] == f"{overall.baseline_rate * 100:.1f} %"
    assert metrics["Candidate pass rate"] == f"{overall.candidate_rate * 100:.1f} %"
    assert metrics["Gates"] == nightly.gates.verdict
    assert metrics["Difference"] == f"{overall.difference * 100 + 0.0:+.1f} pp"
    shown = _html(app)
    for gate in nightly.gates.gates:
        assert html.escape(gate.reason) in shown
    assert not app.dataframe
    rows = _paged_rows(app)
    assert len(rows) == len(nightly.summary.comparison.cases)
    verdicts = [row["verdict"] for row in rows]
    regressions = verdicts.count("regression")
    assert verdicts[:regressions] == ["regression"] * regressions
    by_case = {c.case_id: c for c in nightly.summary.comparison.cases}
    for row in rows:
        assert row["why this verdict"] == by_case[row["case"]].reason
    links = re.findall(r'<a href="case\?([^"]*)" target="_self">', _html(app))
    assert len(links) == len(rows)
    assert all("baseline=" in link and "candidate=" in link and "case=" in link for link in links)
    app.toggle(key="compare_full_table").set_value(True).run()
    _ran_cleanly(app)
    cases = app.dataframe[0].value
    assert len(cases) == len(nightly.summary.comparison.cases)
    assert list(cases["case"]) == [row["case"] for row in rows]


def test_compare_filters_live_in_the_address(app: AppTest, demo_store) -> None:
    _, (nightly, _) = demo_store
    app.switch_page("views/compare.py").run()
    assert [m.key for m in app.multiselect] == ["filter_verdict"]
    app.toggle(key="compare_more_filters").set_value(True).run()
    app.multiselect(key="filter_tag").set_value(["noticias"]).run()
    app.multiselect(key="filter_priority").set_value(["P0"]).run()
    app.multiselect(key="filter_grader").set_value(["policy"]).run()
    _ran_cleanly(app)
    checked_by_policy = {
        r.key.case_id for r in nightly.records if "policy" in _assertion_types(r.grade)
    }
    expected = {
        c.id
        for c in nightly.suite.cases
        if "noticias" in c.tags and c.priority == "P0" and c.id in checked_by_policy
    }
    assert expected
    assert {row["case"] for row in _paged_rows(app)} == expected
    assert app.query_params["tag"] == "noticias"
    assert app.query_params["grader"] == "policy"
    # Turned off, the filters drawn on demand filter nothing and leave the address.
    app.toggle(key="compare_more_filters").set_value(False).run()
    _ran_cleanly(app)
    assert len(_paged_rows(app)) == len(nightly.summary.comparison.cases)
    assert "tag" not in app.query_params and "grader" not in app.query_params


def test_a_compare_address_reopens_the_same_filtered_view(demo_store, monkeypatch) -> None:
    url, (nightly, _) = demo_store
    monkeypatch.setenv("EVALS_STORE_URL", url)
    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.query_params["verdict"] = "inconclusive"
    fresh.query_params["q"] = "titular"
    fresh.switch_page("views/compare.py").run()
    _ran_cleanly(fresh)
    expected = {
        c.case_id
        for c in nightly.summary.comparison.cases
        if c.verdict == "inconclusive" and "titular" in (c.case_id + c.description).lower()
    }
    assert expected
    assert {row["case"] for row in _paged_rows(fresh)} == expected
    assert fresh.text_input(key="filter_q").value == "titular"


def test_case_shows_why_it_fails_then_one_repeat_side_by_side(app: AppTest, demo_store) -> None:
    _, (_, latest) = demo_store
    case_id = "ticker-desconocido-acme"
    app.query_params["case"] = case_id
    app.query_params["baseline"] = side_text(Side(latest.meta.id, "baseline"))
    app.query_params["candidate"] = side_text(Side(latest.meta.id, "candidate"))
    app.switch_page("views/case.py").run()
    _ran_cleanly(app)
    assert app.selectbox(key="case_picker").value == case_id
    records = [r for r in latest.records if r.key.case_id == case_id]
    candidate = sorted(
        (r for r in records if r.key.agent == "candidate"), key=lambda r: r.key.repeat
    )
    failed = [r for r in candidate if r.status != "pass"]
    chosen = failed[0] if failed else candidate[0]
    assert app.radio(key=f"repeat_{case_id}").value == f"{chosen.key.prompt_id}:{chosen.key.repeat}"
    shown = _html(app)
    if failed:
        reason = next(g.reason for g in _preorder(chosen.grade) if not g.passed)
        assert html.escape(reason) in shown
    assert "tool precio" in shown
    words = str(chosen.response.output).split()
    assert all(html.escape(word) in shown for word in words)
    markdown = " ".join(m.value for m in app.markdown)
    assert not any(str(r.response.output) in markdown for r in records)
    assert not app.dataframe
    app.toggle(key="timings").set_value(True).run()
    _ran_cleanly(app)
    steps = app.dataframe[-1].value
    assert len(steps) == len(chosen.response.trajectory)


def _preorder(grade):
    for child in grade.component_results if grade is not None else []:
        yield child
        yield from _preorder(child)


def test_cost_and_latency_shows_stored_estimates_and_flaky_cases(app: AppTest, demo_store) -> None:
    _, (_, latest) = demo_store
    app.switch_page("views/cost_latency.py").run()
    app.selectbox(key="cost_evaluation").set_value(latest.meta.id).run()
    _ran_cleanly(app)
    shown = _html(app)
    for agent in latest.summary.agents:
        row = re.search(rf"<td[^>]*>{re.escape(agent.agent)}</td>(.*?)</tr>", shown)
        assert row is not None, agent.agent
        assert f">{agent.p95_latency_ms:,.0f} ms</td>" in row.group(1)
    assert not app.dataframe
    assert not app.get("vega_lite_chart")
    app.toggle(key="cost_charts").set_value(True).run()
    _ran_cleanly(app)
    assert len(app.get("vega_lite_chart")) >= 2
    flaky = None
    if any(t.key == "flaky_all" for t in app.toggle):
        app.toggle(key="flaky_all").set_value(True).run()
        flaky = app.dataframe[-1].value
    expected = sorted(
        (s for s in latest.summary.case_stats if s.flake), key=lambda s: (-s.flake, s.case_id)
    )
    if expected:
        assert list(flaky["case"]) == [s.case_id for s in expected]
    else:
        assert any("nothing is flaky" in i.value for i in app.info)


def test_compare_shows_what_an_adaptive_run_did(write_suite, tmp_path, monkeypatch) -> None:
    from evals.model.options import RunOptions
    from evals.pipeline.adaptive import run_adaptive
    from evals.suite import load_suite
    from tests.pipeline.test_adaptive import DESIGN, _write

    url = f"sqlite:///{tmp_path / 'adaptive.db'}"
    options = RunOptions(store_url=url, progress=False, trace=False)
    adaptive = run_adaptive(load_suite(_write(write_suite)), options, DESIGN)
    monkeypatch.setenv("EVALS_STORE_URL", url)
    app = AppTest.from_file(APP, default_timeout=60)
    app.switch_page("views/compare.py").run()
    _ran_cleanly(app)
    assert html.escape(adaptive.describe()).replace("\n", "&#10;") in _html(app)


def test_a_chart_point_link_opens_its_evaluation(demo_store, monkeypatch) -> None:
    url, (_, latest) = demo_store
    monkeypatch.setenv("EVALS_STORE_URL", url)
    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.query_params["open"] = latest.meta.id
    fresh.query_params["tag"] = "noticias"
    fresh.switch_page("views/compare.py").run()
    _ran_cleanly(fresh)
    assert "open" not in fresh.query_params
    assert fresh.query_params["baseline"] == side_text(Side(latest.meta.id, "baseline"))
    assert fresh.query_params["candidate"] == side_text(Side(latest.meta.id, "candidate"))
    assert fresh.multiselect(key="filter_tag").value == ["noticias"]
    rows = _paged_rows(fresh)
    tagged = {c.case_id for c in latest.summary.comparison.cases if "noticias" in c.tags}
    assert {row["case"] for row in rows} == tagged


def test_runs_shows_a_page_of_runs_as_a_table_with_case_links(app: AppTest, demo_store) -> None:
    _, (nightly, _) = demo_store
    app.query_params["evaluation"] = nightly.meta.id
    app.switch_page("views/runs.py").run()
    _ran_cleanly(app)
    assert not app.dataframe
    rows = _paged_rows(app)
    assert len(rows) == min(100, len(nightly.records))
    status = {
        (r.key.case_id, r.key.agent, str(r.key.repeat + 1)): r.status for r in nightly.records
    }
    for row in rows:
        assert row["status"] == status[(row["case"], row["agent"], row["repeat"])]
    links = re.findall(r'<a href="compare\?([^"]*)"', _html(app))
    assert len(links) == len(rows)
    assert all(f"open={nightly.meta.id}" in link and "case=" in link for link in links)
    app.toggle(key="runs_full_table").set_value(True).run()
    _ran_cleanly(app)
    assert list(app.dataframe[0].value["case_id"]) == [row["case"] for row in rows]
