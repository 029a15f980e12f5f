"""Suites built from YAML events equal PyYAML's own safe loading, line numbers included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from evals.suite.yaml_lines import _LineLoader, parse_yaml_text

ROOT = Path(__file__).resolve().parents[2]


def _shape(value: Any) -> Any:
    """Value, type, mapping, list and key lines of every node, so equal shapes mean equal
    loads."""
    if isinstance(value, dict):
        items = [(repr(k), _shape(v)) for k, v in value.items()]
        lines = (getattr(value, "line", None), getattr(value, "key_lines", None))
        return ("map", type(value).__name__, lines, items)
    if isinstance(value, list):
        return (
            "seq",
            type(value).__name__,
            getattr(value, "line", None),
            [_shape(v) for v in value],
        )
    return (type(value).__name__, repr(value))


def _reference(text: str) -> Any:
    try:
        return _shape(yaml.load(text, Loader=_LineLoader))
    except (yaml.YAMLError, TypeError) as exc:
        return ("error", type(exc).__name__)


def _ours(text: str) -> Any:
    try:
        return _shape(parse_yaml_text(text))
    except (yaml.YAMLError, TypeError) as exc:
        return ("error", type(exc).__name__)


@pytest.mark.parametrize(
    "path",
    sorted(p for p in ROOT.glob("cases/**/*.yaml"))
    + sorted(ROOT.glob("tests/compat/configs/**/*.yaml")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_shipped_suites_load_as_pyyaml_loads_them(path):
    text = path.read_text(encoding="utf-8")
    assert _ours(text) == _reference(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1, c: 2}\nd:\n  <<: *x\n  c: 3\n",
        "base: &b {x: 1, y: 2}\nover: &o {y: 3, zz: 4}\nm:\n  <<: [*b, *o]\n  w: 0\n",
        "a: &s hello\nb: *s\nc: [*s, 1, 2.5, true, null, ~, 2024-01-01, 0x1f, '=']\n",
        "=: 1\n",
        "",
        "---\n",
        "a: 1\na: 2\n",
        "a: !!str 12\nb: !!int '7'\nc: !!float 1\nd: !!binary aGk=\n",
        "? [1, 2]\n: x\n",
        "a: &r [*r]\n",
        "--- 1\n--- 2\n",
        "a: &x 1\nb: &x 2\n",
        "a: *missing\n",
        "a: !custom 1\n",
        "a: [1, 2\n",
        "tests:\n  - vars: {q: '{{ env.HOME }}'}\n    assert: [{type: equals, value: 3}]\n",
    ],
)
def test_edge_cases_match_pyyaml(text):
    assert _ours(text) == _reference(text)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
_documents = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=20,
)


@pytest.mark.slow
@given(_documents, st.booleans())
def test_any_dumped_document_loads_identically(document, flow):
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    assert _ours(text) == _reference(text)


def test_lists_know_their_first_line():
    loaded = parse_yaml_text("a:\n  - 1\n  - [2, 3]\nb: [x]\n")
    assert (loaded["a"].line, loaded["a"][1].line, loaded["b"].line) == (2, 3, 4)
