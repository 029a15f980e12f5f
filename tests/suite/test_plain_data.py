"""`plain`: a loaded suite's data as plain dicts and lists, equal, sharing kept."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.suite.yaml_lines import LineDict, LineList, parse_yaml_text, plain

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
KEYS = st.text(max_size=8) | st.integers()


def _lined(value: Any) -> Any:
    """`value` with every mapping a LineDict and every list a LineList, as YAML gives."""
    if isinstance(value, dict):
        lined = LineDict({k: _lined(v) for k, v in value.items()})
        lined.line, lined.key_lines, lined.file = 1, {}, None
        return lined
    if isinstance(value, list):
        items = LineList(_lined(v) for v in value)
        items.line = 1
        return items
    return value


def _types(value: Any) -> set[type]:
    if isinstance(value, dict):
        return {type(value)}.union(*(_types(v) for v in value.values()))
    if isinstance(value, list):
        return {type(value)}.union(*(_types(v) for v in value))
    return set()


DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=30,
)


@pytest.mark.slow
@given(DATA)
def test_plain_data_equals_the_lined_data_in_plain_containers(data):
    lined = _lined(data)
    copied = plain(lined)

    assert copied == data == lined
    assert _types(copied) <= {dict, list}
    assert b"yaml_lines" not in pickle.dumps(copied)


def test_shared_and_self_holding_parts_stay_shared():
    loaded = parse_yaml_text("a: &x {k: [1, 2]}\nb: *x\n")
    copied = plain(loaded)
    assert copied["a"] is copied["b"]
    assert type(copied["a"]) is dict and type(copied["a"]["k"]) is list

    holder = LineList([1])
    holder.line = 1
    holder.append(holder)
    looped = plain(holder)
    assert type(looped) is list and looped[1] is looped and looped[0] == 1
