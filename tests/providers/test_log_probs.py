"""A provider response's `logProbs` reach the graders, from every provider that carries them."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.agents.base import normalize_response
from evals.agents.exec_provider import read_script_output
from evals.agents.validate import MalformedResponse
from evals.agents.worker import to_wire
from evals.model.results import AgentResponse


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-100, 0)))
def test_numbers_are_kept_as_floats(values: list[float]) -> None:
    response = normalize_response({"output": "x", "logProbs": values})
    assert response.log_probs == [float(v) for v in values]


def test_absent_log_probs_are_none() -> None:
    assert normalize_response({"output": "x"}).log_probs is None


@pytest.mark.parametrize("bad", ["-0.1", [True], [float("nan")], ["a"], {"a": 1}])
def test_anything_but_a_list_of_numbers_is_malformed(bad: object) -> None:
    with pytest.raises(MalformedResponse, match="logProbs"):
        normalize_response({"output": "x", "logProbs": bad})


def test_a_dataclass_response_sends_them_under_promptfoos_key() -> None:
    wire = to_wire(AgentResponse(output="x", log_probs=[-0.5]))
    assert wire["logProbs"] == [-0.5]
    assert normalize_response(wire).log_probs == [-0.5]


def test_an_exec_command_reports_none_as_promptfoos_exec_provider() -> None:
    response = read_script_output('{"output": "x", "logProbs": [-0.5]}')
    assert (response.output, response.log_probs) == ("x", None)


def test_the_response_cache_and_store_keep_them() -> None:
    from evals.run.cache import _decode_response, _encode_response

    response = AgentResponse(output="x", log_probs=[-0.25, -1.0])
    again = _decode_response(_encode_response(response))
    assert again.log_probs == [-0.25, -1.0]
    assert dataclasses.replace(again, cached=False) == response
