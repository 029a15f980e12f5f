"""The JSON report's serializer writes what orjson writes when told to expect keys that
are not strings from the start (as JSON.parse reads them), whatever the keys and numbers.

`dumps` first tries without that option, which is faster, and falls back to it (then to
integers beyond 64 bits as floats); the bytes must not depend on which attempt succeeds.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.reports.json_document import dumps
from evals.reports.promptfoo_row import empty_token_usage

_EXPECTING_ANY_KEYS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
_keys = st.one_of(st.text(max_size=5), st.integers(-3, 3), st.booleans(), st.none())
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(value=_values)
def test_dumps_writes_what_orjson_writes_expecting_any_key(value: Any) -> None:
    assert dumps(value) == orjson.dumps(value, default=str, option=_EXPECTING_ANY_KEYS)


def test_integers_beyond_64_bits_under_any_key_become_floats() -> None:
    assert orjson.loads(dumps({1: 2**70, "a": [-(2**65)]})) == {"1": 2.0**70, "a": [-(2.0**65)]}


def test_the_zeroed_token_usage_has_promptfoo_s_keys_in_order() -> None:
    usage = empty_token_usage()
    assert list(usage) == [
        "prompt",
        "completion",
        "cached",
        "total",
        "numRequests",
        "completionDetails",
        "assertions",
    ]
    assert list(usage["assertions"]) == [
        "total",
        "prompt",
        "completion",
        "cached",
        "numRequests",
        "completionDetails",
    ]
    assert usage["completionDetails"] is not usage["assertions"]["completionDetails"]
    assert not any(v for k, v in usage.items() if isinstance(v, int))
