"""js_stringify writes what JavaScript's JSON.stringify writes (checked with node's V8)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.common.jsvalues import js_stringify

NODE = shutil.which("node")
SCRIPT = (
    "const input = require('fs').readFileSync(0, 'utf8');"
    "const [values, indent] = JSON.parse(input);"
    "process.stdout.write(JSON.stringify(values.map((v) => JSON.stringify(v, null, indent))));"
)

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
_keys = st.one_of(_text, st.integers(0, 2**33).map(str), st.sampled_from(["01", "-1", "1.5"]))
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([10**400, -(10**400)]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-5, 1e-7, 1e21, 123456789e-15, 2.0**60, 2.0**-24, -0.0]),
    _text,
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=8,
)


@pytest.mark.slow
@pytest.mark.skipif(NODE is None, reason="needs node")
@settings(max_examples=8)
@given(st.lists(_values, min_size=40, max_size=40), st.sampled_from([0, 2]))
def test_js_stringify_matches_json_stringify(values, indent):
    """One node process per batch: the values cross as JSON (Python ints as their digits)."""
    assert NODE is not None
    answer = subprocess.run(
        [NODE, "-e", SCRIPT],
        input=json.dumps([values, indent]),
        capture_output=True,
        text=True,
        check=True,
    )
    assert [js_stringify(v, indent) for v in values] == json.loads(answer.stdout)


def test_numbers_are_written_as_javascript_writes_them():
    assert js_stringify([1e-5, 2.0, 12345678901234567890]) == "[0.00001,2,12345678901234567000]"
    assert js_stringify({"b": 1, "10": 2, "2": 3}) == '{"2":3,"10":2,"b":1}'
