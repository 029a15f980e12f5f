"""Since when: the walk over stored verdicts follows a case and a tag across suite edits,
goes through inconclusive nights, lists the P0 gate's cases as regressions, and says
where a case's definition changed. The landing page, run with Streamlit's AppTest on a
history `evals run` wrote night after night, answers with the right night before and
after the suite was edited."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from evals.dashboard import changes, history, morning
from tests.dashboard.nightly_project import BREAKS, PARTIAL_FIX, SUITE_EDIT, build_history

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def _listed(*fingerprints: str) -> list[dict[str, Any]]:
    count = len(fingerprints)
    return [
        {"id": f"e{count - i}", "started_at": float(count - i), "fingerprint": fp}
        for i, fp in enumerate(fingerprints)
    ]


def _verdicts(kind: str, name: str, by_evaluation: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {"evaluation_id": e, "kind": kind, "name": name, "verdict": v}
        for e, v in by_evaluation.items()
    ]


def test_the_walk_goes_through_inconclusive_nights_and_suite_edits() -> None:
    listed = _listed("v2", "v2", "v1", "v1", "v1", "v1")  # e6 newest ... e1 oldest
    stored = {
        "e6": "regression",
        "e5": "inconclusive",
        "e4": "regression",
        "e3": "regression",
        "e2": "inconclusive",
        "e1": "equivalent",
    }
    found = history.onsets({"evaluations": listed, "verdicts": _verdicts("tag", "t", stored)})
    onset = found[("tag", "t")]
    assert onset.first["id"] == "e3" and onset.streak == 4
    assert [row["id"] for row in onset.unclear] == ["e5"]
    assert onset.last_good["id"] == "e2" and onset.last_good_verdict == "inconclusive"


def test_a_tags_onset_names_the_cases_that_joined_and_left_it_and_from_when() -> None:
    listed = _listed("v3", "v2", "v2", "v1", "v1")  # e5 newest ... e1 oldest
    stored = {e: "regression" for e in ("e5", "e4", "e3", "e2")} | {"e1": "equivalent"}
    members = {
        "v1": {"t": ["a", "b", "old"]},
        "v2": {"t": ["a", "b", "new"]},
        "v3": {"t": ["a", "b", "new"]},
    }
    onset = history.onsets(
        {"evaluations": listed, "verdicts": _verdicts("tag", "t", stored), "tag_members": members}
    )[("tag", "t")]
    assert onset.first["id"] == "e2"
    (change,) = onset.regrouped
    assert change.evaluation["id"] == "e3" and change.joined == ("new",)
    assert change.left == ("old",)
    assert change.text() == "from e3 on, new joined; old left"
    row = {
        "since": "2026-03-02",
        "since_commit": "",
        "since_evaluation": "e2",
        "streak": 4,
        "last_good": "2026-03-01",
        "last_good_commit": "",
        "last_good_evaluation": "e1",
        "last_good_verdict": "equivalent",
        "unclear": "",
        "redefined": "",
        "regrouped": "; ".join(c.text() for c in onset.regrouped),
    }
    assert changes.since_text(row).endswith(
        ". Its cases changed with the suite: from e3 on, new joined; old left"
    )
    # a version whose outline is not stored says nothing of the tag's cases
    unknown = history.onsets(
        {
            "evaluations": listed,
            "verdicts": _verdicts("tag", "t", stored),
            "tag_members": {"v2": members["v2"]},
        }
    )[("tag", "t")]
    assert unknown.regrouped == ()


def test_the_overview_table_names_the_cases_a_suite_edit_moved_in_or_out_of_a_tag() -> None:
    from evals.dashboard import frames

    found = frames.edits(
        ["v1", "v1", "v2", "v3"],
        members=[["a", "old"], ["a", "old"], ["a", "new"], None],
    )
    assert found == ["", "", "suite edited: new joined; old left", "suite edited"]


def test_a_night_without_the_case_or_with_another_verdict_ends_the_run() -> None:
    listed = _listed("v", "v", "v", "v")
    stored = {"e4": "regression", "e3": "regression", "e1": "regression"}
    onset = history.onsets({"evaluations": listed, "verdicts": _verdicts("case", "c", stored)})[
        ("case", "c")
    ]
    assert (onset.first["id"], onset.last_good["id"]) == ("e3", "e2")
    assert onset.last_good_verdict == history.ABSENT
    better = {"e4": "improvement", "e3": "regression"}
    assert (
        history.onsets({"evaluations": listed, "verdicts": _verdicts("case", "c", better)})[
            ("case", "c")
        ].streak
        == 1
    )


def test_a_changed_definition_is_named_with_its_first_evaluation() -> None:
    listed = _listed("v3", "v2", "v1")
    stored = {"e3": "regression", "e2": "regression", "e1": "regression"}
    found = history.onsets(
        {
            "evaluations": listed,
            "verdicts": _verdicts("case", "c", stored),
            "case_fingerprints": {"v3": {"c": "B"}, "v2": {"c": "A"}, "v1": {"c": "A"}},
        }
    )
    assert [row["id"] for row in found[("case", "c")].redefined] == ["e3"]


def test_a_case_the_failing_p0_gate_names_is_a_regression_whatever_its_verdict() -> None:
    listed = _listed("v", "v", "v")
    stored = {"e3": "inconclusive", "e2": "inconclusive", "e1": "inconclusive"}
    gates = [
        {"evaluation_id": e, "name": "p0_regressions", "status": "fail", "reason": "loss on c-1"}
        for e in ("e3", "e2")
    ]
    found = history.onsets(
        {"evaluations": listed, "verdicts": _verdicts("case", "c-1", stored), "gates": gates},
        ["c-1"],
    )
    onset = found[("case", "c-1")]
    assert (onset.first["id"], onset.last_good["id"]) == ("e2", "e1")
    gate = {"name": "p0_regressions", "status": "fail", "reason": "loss shown on c-1 -50 pp"}
    assert changes.p0_failures({"gates": [gate]}, ["c-1", "c-10", "c"]) == ["c-1"]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("loss shown on case-1 -100.0 pp", ["case-1"]),
        ("loss shown on case-10 -100.0 pp", []),
        ("cases: case-1, case-1-b", ["case-1", "case-1-b"]),
        ("(case-1)", ["case-1"]),
    ],
)
def test_names_are_found_as_whole_ids(text: str, named: list[str]) -> None:
    assert history.named_in(text, ["case-1", "case-1-b", "x"]) == named


@pytest.fixture(scope="module")
def nightly_stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(store after the night before the suite edit, store after all ten nights)."""
    folder = tmp_path_factory.mktemp("nightly")
    store = folder / "store.db"
    build_history(folder / "project", f"sqlite:///{store}", range(1, SUITE_EDIT))
    before = folder / "before-edit.db"
    shutil.copy(store, before)
    build_history(folder / "project", f"sqlite:///{store}", range(SUITE_EDIT, 11))
    return f"sqlite:///{before}", f"sqlite:///{store}"


def _landing(store: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("EVALS_STORE_URL", store)
    app = AppTest.from_file(APP, default_timeout=120)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return "\n".join(block.proto.body for block in app.get("html"))


def _text(markup: str) -> str:
    lines = markup.replace("<br>", "\n").replace("</li>", "\n")
    return re.sub(r"<[^>]+>", "", lines).replace("&amp;", "&")


@pytest.mark.slow
def test_since_when_names_the_night_before_and_after_the_suite_edit(
    nightly_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = nightly_stores
    for store, newest in ((before, SUITE_EDIT - 1), (after, 10)):
        text = _text(_landing(store, monkeypatch))
        tag = text[text.index("tag refunds") :]
        assert f"(night-{BREAKS:02d}), {newest - BREAKS + 1} evaluations" in tag.split("\n")[0]
        card = text[text.index("When:") :].split("\n")[0]
        assert f"since 2026-03-0{4 + BREAKS}" in card
        assert f"inconclusive on their own (night-{PARTIAL_FIX:02d})" in card
        assert f"last without it: 2026-03-0{3 + BREAKS}" in card
        assert "no earlier one" not in text and "this evaluation only" not in card


@pytest.mark.slow
def test_the_p0_gate_failures_lead_and_are_listed_with_links(
    nightly_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    markup = _landing(nightly_stores[1], monkeypatch)
    answer = markup[markup.index("evals-answer") : markup.index("Improvements")]
    gates = answer[answer.index("Gates that did not pass") : answer.index("Regressions (")]
    assert "p0_regressions" in gates
    for case in ("account-question-account-0", "refunds-question-refund-1"):
        assert "case=" in gates and f">{case}</a>" in gates
    regressions = answer[answer.index("Regressions (") :]
    assert ">account-question-account-0</a> · P0 · <b>P0 gate failed</b>" in regressions
    text = _text(markup)
    card = text[text.index("case account-question-account-0 · P0 —") :]
    assert "its own verdict over all cases: inconclusive" in card.split("When:")[0]
    redefined = text[text.index("case refunds-question-refund-2 · P2 —") :].split("\n")
    assert any(
        "definition (vars, assertions) changed from night-08 on" in line for line in redefined[:8]
    )


def test_the_answer_lines_are_short_and_escaped() -> None:
    row = {
        "kind": "case",
        "name": "<b>x</b>",
        "priority": "P0",
        "gate": "",
        "baseline": 1.0,
        "candidate": 0.0,
        "difference": -1.0,
        "since_evaluation": "e1",
        "since": "2026-03-08 03:00",
        "since_commit": "abc",
        "streak": 3,
        "last_good_evaluation": "e0",
    }
    line = morning.change_line(row, lambda kind, name: f"case?case={name}")
    assert "<b>x</b>" not in line and "&lt;b&gt;x&lt;/b&gt;" in line
    assert "-100.0 pp" in line and "since 2026-03-08 03:00 · commit abc (e1), 3 evaluations" in line


@pytest.mark.slow
def test_a_quarantined_case_carries_its_badge_on_every_page(
    nightly_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from evals.store import open_store
    from evals.team import triage

    store = nightly_stores[1]
    case = "refunds-question-refund-2"  # among the first regressions the answer lists
    opened = open_store(store)
    now = time.time()
    try:
        suite_id = opened.list_evaluations(limit=1)[0].suite_id
        triage.record(
            opened,
            triage.new_action(
                "quarantine",
                suite_id,
                "ann@example.com",
                "flaky refund API",
                now=now,
                case_id=case,
                environment="nightly",
                until=now + 86400,
            ),
        )
    finally:
        opened.close()
    streamlit.cache_data.clear()  # the triage log is read with a cache of a few seconds
    landing = _landing(store, monkeypatch)
    line = next(li for li in landing.split("<li>") if f">{case}</a>" in li)
    assert "quarantined until" in line and "flaky refund API" in line
    app = AppTest.from_file(APP, default_timeout=120)
    app.switch_page("views/compare.py").run()
    shown = " ".join(h.proto.body for h in app.html)
    row = next(r for r in shown.split("<tr>") if f">{case}</a>" in r)
    assert "quarantined until" in row
    app.query_params["case"] = case
    app.switch_page("views/case.py").run()
    assert "quarantined until" in " ".join(h.proto.body for h in app.html)
    picker = app.selectbox(key="case_picker")
    option = next(o for o in picker.options if f" · {case} · " in o)
    assert "quarantined until" in option
    assert not any("quarantined" in o for o in picker.options if o != option)
    app.query_params.clear()
    app.query_params["trend"] = f"case:{case}"
    app.switch_page("views/overview.py").run()
    picker = app.selectbox(key="trend_case")
    assert picker.value == case
    assert any(o.startswith(f"{case} · quarantined until") for o in picker.options)
    assert "quarantined until" in " ".join(h.proto.body for h in app.html)
    app.query_params.clear()
    app.query_params["run_case"] = case
    app.switch_page("views/runs.py").run()
    table = next(h.proto.body for h in app.html if "paged-table" in h.proto.body)
    assert all("quarantined until" in row for row in table.split("<tbody>")[1].split("<tr>")[1:])
    assert any(
        o.startswith(f"{case} · quarantined until")
        for o in app.multiselect(key="filter_run_case").options
    )


@pytest.mark.slow
def test_the_refunds_tag_says_which_case_the_suite_edit_added_to_it(
    nightly_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = nightly_stores[1]
    streamlit.cache_data.clear()
    landing = _text(_landing(store, monkeypatch))
    # the tag's card: its "When:" line
    when = next(line for line in landing.splitlines() if "When:" in line and "night-" in line)
    joined = f"Its cases changed with the suite: from night-{SUITE_EDIT:02d} on, "
    assert joined + "refunds-question-refund-partial joined" in when
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["trend"] = "tag:refunds"
    app.switch_page("views/overview.py").run()
    assert not app.exception, [e.value for e in app.exception]
    tables = " ".join(h.proto.body for h in app.html)
    assert "suite edited: refunds-question-refund-partial joined" in tables
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["trend"] = "tag:billing"
    app.switch_page("views/overview.py").run()
    tables = " ".join(h.proto.body for h in app.html)
    assert "suite edited: billing-question-billing-9 left" in tables


@pytest.mark.slow
def test_runs_are_searched_across_every_evaluation_of_the_suite(
    nightly_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evals.store import open_store
    from evals.store.dashboard_queries import DashboardQueries, SearchError

    store = nightly_stores[1]
    opened = open_store(store, read_only=True)
    queries = DashboardQueries(opened.engine)
    ids = [e["id"] for e in queries.evaluations("project", complete_only=True)]
    wrong = queries.search_runs(ids[0], text="Refund of 2100 EUR", across=ids, limit=None)
    nights = {row["evaluation_id"] for row in wrong["rows"]}
    # The bug's nights: 4, 5 (two repeats of eight), 6, and 7 to 10.
    assert nights == {f"night-{n:02d}" for n in range(BREAKS, 11)}
    assert wrong["total"] == 8 * 6 + 2
    by_pattern = queries.search_runs(
        ids[0], text=r"Refund of \d{4,} EUR", regex=True, across=ids, limit=10
    )
    assert by_pattern["total"] > wrong["total"] and len(by_pattern["rows"]) == 10
    assert by_pattern["rows"][0]["evaluation_id"] == "night-10"  # newest first
    with pytest.raises(SearchError):
        queries.search_runs(ids[0], text="(unclosed", regex=True, across=ids)
    opened.close()

    monkeypatch.setenv("EVALS_STORE_URL", store)
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["across"] = "1"
    app.query_params["find"] = "Refund of 2100 EUR"
    app.switch_page("views/runs.py").run()
    assert not app.exception, [e.value for e in app.exception]
    table = next(h.proto.body for h in app.html if "paged-table" in h.proto.body)
    assert ">night-10</a>" in table and ">night-04</a>" in table
    assert "50 runs match" in " ".join(c.value for c in app.caption)


@pytest.mark.slow
def test_a_case_trend_says_where_the_suite_and_the_case_changed(
    nightly_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_STORE_URL", nightly_stores[1])
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["trend"] = "case:refunds-question-refund-2"
    app.switch_page("views/overview.py").run()
    assert not app.exception, [e.value for e in app.exception]
    table = next(h.proto.body for h in app.html if "since the one before" in h.proto.body)
    rows = {
        cells[1]: cells
        for cells in (
            re.findall(r"<td[^>]*>(?:<span[^>]*>)?([^<]*)", r) for r in table.split("<tr>")
        )
        if len(cells) > 4
    }
    assert "suite edited" in rows[f"night-{SUITE_EDIT:02d}"]
    assert "case redefined" in rows["night-08"]
    assert "" in rows["night-09"] and "case redefined" not in rows["night-09"]
