"""The HTML report's per-case chart never shows two cases under the same label: a long
name is cut in its middle, and less where a cut would make two names read the same."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from evals.reports.svg import LABEL_CHARS, IntervalPoint, distinct_labels, interval_chart

INJECTED = [f"instrucción-inyectada-en-un-titular-{t}" for t in ("busi", "nave", "lumi", "vera")]


def test_cases_differing_at_the_end_keep_distinct_labels():
    """Before: all four read `instrucción-inyectada-en-…`, one of them a P0 regression."""
    labels = distinct_labels(INJECTED)
    assert len(set(labels)) == 4
    assert all(len(label) == LABEL_CHARS for label in labels)
    assert labels[0].endswith("-busi") and "…" in labels[0]


def test_the_chart_shows_each_case_once_with_its_whole_name_on_hover():
    points = [IntervalPoint(name, -0.5, (-0.9, -0.1)) for name in [*INJECTED, "short"]]
    svg = interval_chart("Δ per case", points, -1.0, 1.0, 0.0)
    shown = re.findall(r"</title>([^<]*)</text>|<text x=\"0\" y=\"[\d.]+\">([^<]*)</text>", svg)
    labels = [a or b for a, b in shown]
    assert len(labels) == 5 and len(set(labels)) == 5
    assert all(f"<title>{name}</title>" in svg for name in INJECTED)
    assert "<title>short</title>" not in svg


@given(st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=30, unique=True))
def test_distinct_names_get_distinct_labels_no_longer_than_needed(names):
    labels = distinct_labels(names)
    assert len(set(labels)) == len(names)
    for name, label in zip(names, labels, strict=True):
        assert label == name or (len(label) < len(name) and "…" in label)
    if all(len(name) <= LABEL_CHARS for name in names):
        assert labels == names
