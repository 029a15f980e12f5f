"""The LangGraph/LangChain adapter against the real libraries, offline with a scripted
chat model: trajectory from LangChain callbacks, usage and cost, stop reasons, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "langgraph", reason="needs the [langgraph] extra: pip install -e '.[langgraph]'"
)

from evals.agents.frameworks.langgraph import LangGraphAgent
from evals.common.files import load_module
from evals.model.errors import SuiteError
from evals.model.suite import ProviderSpec
from evals.vendors.prices import LIST_PRICES
from tests.providers.helpers import make_context, run

pytestmark = pytest.mark.extra("langgraph")

APPS = Path(__file__).parent / "framework_apps"


def _agent(attribute: str = "build", **config: object) -> LangGraphAgent:
    spec = ProviderSpec(id=f"langgraph:langgraph_app.py:{attribute}", label="a", config=config)
    return LangGraphAgent(spec, APPS)


def test_callbacks_record_model_and_tool_calls_in_order_with_nodes_and_cost() -> None:
    response = run(_agent().call("fetch x", make_context()))
    assert response.error is None and response.stop_reason == "done"
    assert response.output == 'done: {"sum": 5} | {"value": 7}'
    kinds = [(s.kind, s.name) for s in response.trajectory]
    assert kinds[0] == ("model", "gpt-4o-mini") and kinds[-1] == ("model", "gpt-4o-mini")
    assert sorted(kinds[1:3]) == [("tool", "add"), ("tool", "fetch")]
    tools = {s.name: s for s in response.trajectory if s.kind == "tool"}
    assert tools["add"].arguments == {"a": 2, "b": 3} and tools["add"].result == {"sum": 5}
    assert tools["fetch"].result == {"value": 7} and tools["fetch"].call_id == "call_2"
    assert {s.metadata["node"] for s in response.trajectory} == {"agent", "tools"}
    listed = LIST_PRICES["gpt-4o-mini"]
    price_in, price_out = listed.input_per_mtok / 1e6, listed.output_per_mtok / 1e6
    models = [s for s in response.trajectory if s.kind == "model"]
    assert [s.input_tokens for s in models] == [10, 40]
    assert response.cost == pytest.approx(50 * price_in + 8 * price_out)
    assert response.token_usage == {"numRequests": 2, "prompt": 50, "completion": 8, "total": 58}


def test_a_tool_error_handed_to_the_model_is_an_error_step() -> None:
    response = run(_agent().call("fetch nope", make_context()))
    assert response.stop_reason == "done"
    fetch = next(s for s in response.trajectory if s.name == "fetch")
    assert fetch.error == "LookupError: no key nope" and fetch.result is None


def test_a_tool_error_the_graph_raises_is_an_error_response_with_the_steps_so_far() -> None:
    response = run(_agent(handle=False).call("fetch nope", make_context()))
    assert response.stop_reason == "error"
    assert response.error == "LookupError: no key nope"
    assert response.trajectory[0].kind == "model"
    assert any(s.name == "fetch" and s.error for s in response.trajectory)


def test_the_recursion_limit_stops_with_max_steps() -> None:
    response = run(_agent(recursion_limit=5).call("loop", make_context()))
    assert response.stop_reason == "max_steps" and response.error is None
    assert sum(s.kind == "model" for s in response.trajectory) == 3


def test_an_interrupt_stops_with_an_approval_step() -> None:
    response = run(_agent(checkpointer=True).call("delete it", make_context()))
    assert response.stop_reason == "approval_required"
    approval = response.trajectory[-1]
    assert approval.kind == "approval" and approval.name == "delete"
    assert approval.arguments == {"tool": "delete", "path": "/tmp/a"}


def test_each_run_gets_its_seed_and_a_fresh_thread() -> None:
    agent = _agent(checkpointer=True)
    context = make_context()
    run(agent.call("fetch x", context))
    run(agent.call("fetch x", context))
    configs = load_module(APPS / "langgraph_app.py").CONFIGS[-4:]
    assert {c["seed"] for c in configs} == {context.seed}
    assert len({c["thread_id"] for c in configs}) == 2


def test_models_without_usage_have_unknown_tokens_and_cost() -> None:
    response = run(_agent(usage=False).call("fetch x", make_context()))
    assert response.cost is None and "prompt" not in response.token_usage
    assert response.token_usage["numRequests"] == 2


def test_a_plain_runnable_takes_the_prompt_text() -> None:
    response = run(_agent("chat_model", input_key="").call("fetch x", make_context()))
    assert response.output == ""
    assert [s.kind for s in response.trajectory] == ["model"]
    assert response.trajectory[0].metadata["tool_calls"] == ["add", "fetch"]


def test_objects_that_are_not_graphs_are_rejected_at_load() -> None:
    with pytest.raises(SuiteError, match="is a str, not a compiled graph"):
        _agent("summary")
    with pytest.raises(SuiteError, match="has no 'missing'"):
        _agent("missing")
