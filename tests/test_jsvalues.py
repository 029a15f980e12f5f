"""js_stringify writes what JavaScript's JSON.stringify writes (checked in the JS engine)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evals.common import jsengine
from evals.common.jsvalues import js_stringify

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
_keys = st.one_of(_text, st.integers(0, 2**33).map(str), st.sampled_from(["01", "-1", "1.5"]))
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([10**400, -(10**400)]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-5, 1e-7, 1e21, 123456789e-15, 2.0**60, -0.0]),
    _text,
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=8,
)


def _javascript(value: object, indent: int) -> str:
    template = "{{ v | dump(" + str(indent) + ") }}" if indent else "{{ v | dump }}"
    return jsengine.call("render", template, {"v": value}, None, nunjucks=True)


@settings(max_examples=300)
@given(_values, st.sampled_from([0, 2]))
def test_js_stringify_matches_json_stringify(value, indent):
    assert js_stringify(value, indent) == _javascript(value, indent)


def test_numbers_are_written_as_javascript_writes_them():
    assert js_stringify([1e-5, 2.0, 12345678901234567890]) == "[0.00001,2,12345678901234567000]"
    assert js_stringify({"b": 1, "10": 2, "2": 3}) == '{"2":3,"10":2,"b":1}'
