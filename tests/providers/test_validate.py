"""What an agent may return: the checks at the boundary, against independent encoders."""

from __future__ import annotations

import json
import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.agents.base import normalize_response
from evals.agents.validate import (
    MAX_DEPTH,
    MAX_TEXT,
    MalformedResponse,
    check_response,
    load_json,
)
from evals.model.results import AgentResponse
from evals.model.trajectory import Step

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.slow
@given(JSON_VALUES)
def test_json_values_pass_and_encode(value):
    check_response(AgentResponse(output=value, metadata={"m": value}))
    # what passed is what the store's encoders and the pipe accept
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    pickle.dumps(value)


@pytest.mark.parametrize(
    "output",
    [
        float("nan"),
        float("inf"),
        {1, 2},
        b"\xff",
        object(),
        "bad \ud800",
        {"k": ["ok", "\udfff"]},
        10**5000,
        nested(MAX_DEPTH + 1),
        "x" * (MAX_TEXT + 1),
        ["x" * (MAX_TEXT // 2), "y" * (MAX_TEXT // 2 + 1)],
        {("tuple", "key"): 1},
    ],
    ids=lambda v: type(v).__name__,
)
def test_garbage_outputs_are_malformed(output):
    with pytest.raises(MalformedResponse):
        check_response(AgentResponse(output=output))


def test_limits_are_inclusive():
    check_response(AgentResponse(output=nested(MAX_DEPTH - 1)))
    check_response(AgentResponse(output="x" * MAX_TEXT))
    check_response(AgentResponse(output=10**3999))


def test_a_value_that_contains_itself_is_malformed():
    loop: dict[str, object] = {}
    loop["self"] = loop
    with pytest.raises(MalformedResponse, match="contains itself"):
        check_response(AgentResponse(output=loop))
    with pytest.raises(MalformedResponse):
        check_response(AgentResponse(output="ok", metadata=loop))


def test_shared_subtrees_cannot_blow_up_the_walk():
    value: object = "x" * 1000
    for _ in range(60):  # 2**60 paths through 60 shared nodes
        value = [value, value]
    with pytest.raises(MalformedResponse, match="larger than"):
        check_response(AgentResponse(output=value))


def test_metadata_keeps_unknown_objects_but_not_garbage_shapes():
    check_response(AgentResponse(output="ok", metadata={"when": object()}))
    deep = {"a": nested(100_000)}
    with pytest.raises(MalformedResponse, match="metadata"):
        check_response(AgentResponse(output="ok", metadata=deep))
    step = Step(kind="tool", name="t", arguments={"a": nested(100_000)})
    with pytest.raises(MalformedResponse, match=r"trajectory\[0\]"):
        check_response(AgentResponse(output="ok", trajectory=[step]))


@pytest.mark.parametrize(
    "raw",
    [
        {"output": "ok", "cost": math.nan},
        {"output": "ok", "cost": -0.01},
        {"output": "ok", "cost": True},
        {"output": "ok", "cost": "1"},
        {"output": "ok", "tokenUsage": {"prompt": -1}},
        {"output": "ok", "tokenUsage": {"total": math.inf}},
        {"output": "ok", "tokenUsage": {"completion": 2**63}},
        {"output": "ok", "tokenUsage": {"prompt": 1.5}},
        {"output": "ok", "tokenUsage": {"prompt": False}},
        {"output": "ok", "latencyMs": "fast"},
        {"output": "ok", "latencyMs": -1},
        {"output": "ok", "latencyMs": math.nan},
    ],
)
def test_bad_numbers_are_malformed(raw):
    with pytest.raises(MalformedResponse):
        check_response(normalize_response(raw))


@given(
    st.floats(0, 1e12),
    st.integers(0, 2**63 - 1),
    st.one_of(st.none(), st.floats(0, 1e9)),
)
def test_good_numbers_pass(cost, tokens, latency):
    response = normalize_response(
        {"output": "ok", "cost": cost, "tokenUsage": {"prompt": tokens}, "latencyMs": latency}
    )
    check_response(response)
    assert response.cost == cost and response.token_usage["prompt"] == tokens


def test_numbers_set_on_a_response_directly_are_checked_too():
    with pytest.raises(MalformedResponse):
        check_response(AgentResponse(output="ok", token_usage={"prompt": -3}))
    with pytest.raises(MalformedResponse):
        check_response(AgentResponse(output="ok", cost=math.inf))
    with pytest.raises(MalformedResponse):
        check_response(AgentResponse(output="ok", trajectory=[Step("llm", "m", cost=-1.0)]))


def test_deep_json_text_is_malformed_not_a_recursion_error():
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(MalformedResponse, match="nested too deeply"):
        load_json(text, "reply")
    with pytest.raises(json.JSONDecodeError):
        load_json("{not json", "reply")
    assert load_json('{"a": [1]}', "reply") == {"a": [1]}
