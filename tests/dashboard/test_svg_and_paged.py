"""The server-side charts and the paged HTML table: well-formed, labelled, linked, with
points on their values, number axes whose labels never repeat, and pages that cover every
row once."""

from __future__ import annotations

import base64
import itertools
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.dashboard import charts, paged, svg

SVG = "{http://www.w3.org/2000/svg}"
FORMATS = [".0%", "+.0%", "$.4f", ",.0f", "+.1%"]


def _parse(chart: str) -> tuple[ET.Element, ET.Element]:
    """The chart's figure (its image and points) and the SVG picture of its image."""
    figure = ET.fromstring(chart)
    assert figure.tag == "figure"
    source = figure.find("img").get("src")
    prefix = "data:image/svg+xml;base64,"
    assert source.startswith(prefix)
    return figure, ET.fromstring(base64.b64decode(source[len(prefix) :]))


def _position(point: ET.Element, height: int) -> tuple[float, float]:
    """A point's centre in the picture's coordinates, from its CSS percentages."""
    style = dict(part.split(":") for part in point.get("style").split(";"))
    return (
        float(style["left"].rstrip("%")) / 100 * svg.WIDTH,
        float(style["top"].rstrip("%")) / 100 * height,
    )


def _trend_frame(rates: list[float], agents: tuple[str, ...] = ("baseline", "candidate")):
    rows = []
    for index, rate in enumerate(rates):
        for offset, agent in enumerate(agents):
            value = min(1.0, rate + offset * 0.01)
            rows.append(
                {
                    "started": pd.Timestamp(1_733_400_000 + index * 86_400, unit="s", tz="UTC"),
                    "when": f"day {index}",
                    "evaluation": f"ev-{index}",
                    "commit": f"c{index:09d}",
                    "verdict": "pass" if index % 2 else "fail",
                    "agent": agent,
                    "pass_rate": value,
                    "pass_low": max(0.0, value - 0.02),
                    "pass_high": min(1.0, value + 0.02),
                }
            )
    return pd.DataFrame.from_records(rows)


@given(
    low=st.floats(-1e6, 1e6, allow_nan=False),
    width=st.floats(0, 1e6, allow_nan=False),
    axis_format=st.sampled_from(FORMATS),
)
def test_number_ticks_cover_the_range_with_distinct_labels(
    low: float, width: float, axis_format: str
) -> None:
    high = low + width
    ticks = svg.number_ticks(low, high, axis_format)
    assert len(ticks) >= 2
    assert ticks[0] <= low + 1e-9 * max(1.0, abs(low))
    assert ticks[-1] >= high - 1e-9 * max(1.0, abs(high))
    labels = [svg.format_number(t, axis_format) for t in ticks]
    assert len(set(labels)) == len(labels), labels
    # Ticks far from zero carry float rounding: a relative tolerance.
    step = charts.label_step(axis_format)
    assert min(b - a for a, b in itertools.pairwise(ticks)) >= step * (1 - 1e-6)


@pytest.mark.parametrize(
    ("value", "axis_format", "written"),
    [
        (0.7234, ".0%", "72%"),
        (-0.051, "+.1%", "−5.1%"),
        (0.0, "+.0%", "+0%"),
        (-0.0001, "+.0%", "+0%"),
        (1234.5, ",.0f", "1,234"),
        (0.00123, "$.4f", "$0.0012"),
    ],
)
def test_numbers_are_written_as_the_d3_format_writes_them(
    value: float, axis_format: str, written: str
) -> None:
    assert svg.format_number(value, axis_format) == written


def test_an_unknown_number_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported number format"):
        svg.format_number(1.0, ".3e")


@pytest.mark.slow
@given(rates=st.lists(st.floats(0.5, 0.99), min_size=1, max_size=40))
def test_a_trend_links_every_point_and_names_it(rates: list[float]) -> None:
    frame = _trend_frame(rates)
    chart = svg.trend(
        frame,
        value="pass_rate",
        low="pass_low",
        high="pass_high",
        title="Pass rate <per agent>",
        axis_title="pass rate",
        axis_format=".0%",
        href=lambda evaluation: f"compare?open={evaluation}&x=1",
    )
    assert "\n" not in chart
    figure, root = _parse(chart)
    assert figure.get("aria-label") == "Pass rate <per agent>"
    assert figure.find("img").get("alt").startswith("Pass rate <per agent>: pass rate of ")
    assert root.find(f"{SVG}title").text == "Pass rate <per agent>"
    assert "latest" in root.find(f"{SVG}desc").text
    links = figure.findall("a")
    assert len(links) == len(frame)
    assert {link.get("class") for link in links} == {"point"}
    tips = {(link.get("href"), link.get("title")) for link in links}
    for row in frame.to_dict("records"):
        matching = [
            tip
            for href, tip in tips
            if f"evaluation: {row['evaluation']}\n" in tip
            and f"agent: {row['agent']}\n" in tip
            and href == f"compare?open={row['evaluation']}&x=1"
        ]
        assert len(matching) == 1
        assert f"pass rate: {svg.format_number(row['pass_rate'], '.0%')}" in matching[0]
        assert f"started (UTC): {row['when']}" in matching[0]
        assert "interval: " in matching[0] and f"gate verdict: {row['verdict']}" in matching[0]
    hrefs = {link.get("href") for link in links}
    assert hrefs == {f"compare?open=ev-{i}&x=1" for i in range(len(rates))}
    assert len(root.findall(f".//{SVG}polygon")) == 2  # one interval band per agent
    ticks = [t.text for t in root.findall(f".//{SVG}g[@class='axis number-axis']/{SVG}text")]
    assert len(set(ticks)) == len(ticks)
    dates = [t.text for t in root.findall(f".//{SVG}g[@class='axis date-axis']/{SVG}text")]
    assert dates and all(re.fullmatch(r"[A-Z][a-z]{2} \d\d( \d\d:\d\d)?", d) for d in dates)


def test_a_point_sits_at_its_value_on_the_axis() -> None:
    chart = svg.trend(
        _trend_frame([0.6, 0.8], agents=("solo",)),
        value="pass_rate",
        low=None,
        high=None,
        title="t",
        axis_title="pass rate",
        axis_format=".0%",
        href=str,
    )
    figure, root = _parse(chart)
    axis = root.find(f".//{SVG}g[@class='axis number-axis']")
    lines = axis.findall(f"{SVG}line")
    labels = [t.text for t in axis.findall(f"{SVG}text[@class='tick']")]
    position = {label: float(line.get("y1")) for label, line in zip(labels, lines, strict=True)}
    height = int(root.get("height"))
    points = [_position(point, height) for point in figure.findall("a")]
    assert [y for _, y in points] == pytest.approx([position["60%"], position["80%"]], abs=0.2)
    # The two points lie on the line drawn through them in the picture.
    line = root.find(f".//{SVG}polyline").get("points").split()
    drawn = [float(v) for p in line for v in p.split(",")]
    assert [v for point in points for v in point] == pytest.approx(drawn, abs=0.2)
    assert root.findall(f".//{SVG}polygon") == []


def test_a_forest_links_tags_and_escapes_names() -> None:
    frame = pd.DataFrame(
        {
            "group": ["whole suite", "tag <b>&news"],
            "difference": [-0.10, 0.05],
            "low": [-0.20, -0.01],
            "high": [0.0, 0.11],
            "verdict": ["regression", "inconclusive"],
            "cases": [500, 40],
        }
    )
    chart = svg.forest(
        frame, title="Forest", href=lambda g: "compare?tag=x" if g.startswith("tag") else None
    )
    figure, root = _parse(chart)
    assert [link.get("href") for link in figure.findall("a")] == ["compare?tag=x"]
    tips = [point.get("title") for point in figure if "point" in (point.get("class") or "")]
    assert tips[0].startswith("whole suite") and "interval: −20.0% to +0.0%" in tips[0]
    assert tips[1].startswith("tag <b>&news") and "verdict: inconclusive" in tips[1]
    assert figure.find("span").get("class") == "point diamond"
    assert "tag <b>&news: +5.0%" in root.find(f"{SVG}desc").text
    assert "<b>" not in chart
    source = figure.find("img").get("src")
    assert b"<b>" not in base64.b64decode(source.split(",", 1)[1])


def test_a_forest_row_without_an_interval_draws_its_point_only() -> None:
    frame = pd.DataFrame(
        {
            "group": ["whole suite", "tag thin"],
            "difference": [-0.10, 0.5],
            "low": [-0.20, None],
            "high": [0.0, None],
            "verdict": ["regression", "insufficient data"],
            "cases": [500, 1],
        }
    )
    chart = svg.forest(frame, title="Forest", href=lambda g: None)
    assert "nan" not in chart
    figure, root = _parse(chart)
    assert len(figure.findall("span")) == 2
    assert len(root.findall(f".//{SVG}line[@stroke-width='3']")) == 1
    assert "tag thin: +50.0% (no interval)" in root.find(f"{SVG}desc").text


def _cases(count: int) -> pd.DataFrame:
    verdicts = ["equivalent", "regression", "inconclusive", "improvement"]
    return pd.DataFrame(
        {
            "case": [f"case-{i:03d}" for i in range(count)],
            "verdict": [verdicts[i % 4] for i in range(count)],
            "difference": [((i * 37) % 11 - 5) / 10 for i in range(count)],
        }
    ).assign(rank=lambda f: f["verdict"].map({"regression": 0, "improvement": 1}).fillna(2))


@pytest.mark.slow
@given(count=st.integers(0, 300), per_page=st.integers(1, 60))
def test_pages_cover_every_row_once(count: int, per_page: int) -> None:
    frame = _cases(count)
    ordered = paged.sort_rows(frame, paged.Sort("difference", (("difference", True),)), "rank")
    pages = paged.page_count(count, per_page)
    seen = [
        case
        for page in range(1, pages + 1)
        for case in ordered.iloc[(page - 1) * per_page : page * per_page]["case"]
    ]
    assert sorted(seen) == sorted(frame["case"])
    ranks = list(ordered["rank"])
    assert ranks == sorted(ranks)
    for rank in set(ranks):
        within = list(ordered[ordered["rank"] == rank]["difference"])
        assert within == sorted(within)


@pytest.mark.parametrize(
    ("wanted", "page"), [(None, 1), ("", 1), ("x", 1), ("0", 1), ("2", 2), ("99", 3)]
)
def test_an_address_page_is_kept_within_the_pages(wanted: str | None, page: int) -> None:
    assert paged.clamp_page(wanted, 120, 50) == page


def test_a_table_escapes_cells_links_cases_and_has_headers() -> None:
    frame = pd.DataFrame({"case": ["a<b>", "c"], "verdict": ["regression", None]})
    table = paged.table_html(
        frame,
        [
            paged.Column("verdict", "verdict", tinted=True),
            paged.Column("case", "case", href=lambda row: f"case?case={row['case']}&x=1"),
        ],
        "cases 1–2 of 2",
    )
    assert '<th scope="col">verdict</th><th scope="col">case</th>' in table
    assert "<caption" in table and "cases 1–2 of 2" in table
    assert '<a href="case?case=a&lt;b&gt;&amp;x=1" target="_self">a&lt;b&gt;</a>' in table
    assert "<b>" not in table
    assert table.count("<tr>") == 3
    assert "regression</span>" in table


def _paged_script() -> None:
    import pandas as pd
    import streamlit as st

    from evals.dashboard import paged

    rows = int(st.query_params.get("rows", "120"))
    frame = pd.DataFrame(
        {
            "case": [f"case-{i:03d}" for i in range(120)],
            "difference": [(i * 37 % 120) / 100 for i in range(120)],
            "rank": [0 if i % 10 == 0 else 2 for i in range(120)],
        }
    ).head(rows)
    paged.draw(
        frame,
        [paged.Column("case", "case"), paged.Column("difference", "difference")],
        noun="cases",
        key="t",
        sorts=[paged.Sort("evidence", ()), paged.Sort("difference", (("difference", True),))],
        first="rank",
    )


def _shown_cases(app) -> list[str]:
    body = next(h.proto.body for h in app.html if "paged-table" in h.proto.body)
    return re.findall(r"<tr><td[^>]*>(case-\d+)</td>", body)


def test_an_address_reopens_the_same_page_and_order() -> None:
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_paged_script)
    app.query_params["page"] = "2"
    app.query_params["sort"] = "difference"
    app.run()
    assert not app.exception
    assert app.selectbox(key="t_sort").value == "difference"
    assert app.number_input(key="t_page").value == 2
    body = next(h.proto.body for h in app.html if "paged-table" in h.proto.body)
    assert "cases 51–100 of 120 · page 2 of 3 · sorted by difference" in body
    # The script's rows in order, sorted here by Python's own stable sort.
    order = sorted(range(120), key=lambda i: (0 if i % 10 == 0 else 2, (i * 37 % 120) / 100))
    expected = [f"case-{i:03d}" for i in order[50:100]]
    assert _shown_cases(app) == list(expected)
    app.number_input(key="t_page").set_value(3).run()
    assert app.query_params["page"] == "3"
    assert len(_shown_cases(app)) == 20
    app.selectbox(key="t_sort").set_value("evidence").run()
    assert "sort" not in app.query_params


def test_an_empty_table_says_nothing_matches() -> None:
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_paged_script)
    app.query_params["rows"] = "0"
    app.query_params["page"] = "4"
    app.run()
    assert not app.exception
    body = next(h.proto.body for h in app.html if "paged-table" in h.proto.body)
    assert "no cases match these filters" in body
    assert _shown_cases(app) == []
    assert "page" not in app.query_params


@given(
    st.integers(min_value=1_600_000_000, max_value=1_900_000_000),
    st.integers(min_value=0, max_value=20 * 365 * 86_400),
    st.integers(min_value=2, max_value=8),
)
def test_date_ticks_fall_on_calendar_steps_within_the_data(low: int, span: int, count: int) -> None:
    ticks, step = svg.date_ticks(low, low + span, count)
    assert 1 <= len(ticks) <= count
    if span == 0:
        assert ticks == [low] and step == 0
        return
    assert all(low <= tick <= low + span for tick in ticks) or ticks == [low]
    if ticks != [low] or low % step == 0:
        assert all(tick % step == 0 for tick in ticks)
        assert all(b - a == step for a, b in itertools.pairwise(ticks))
    smaller = [s for s in svg.DATE_STEPS if s < step]
    # No smaller calendar step would have kept the ticks within `count`.
    assert all((low + span) // s - -(-low // s) + 1 > count for s in smaller)
    labels = [svg.date_label(tick, step) for tick in ticks]
    assert len(set(labels)) == len(labels)
