"""Framework provider ids: checked at suite load (package, module, id form), objects and
factories resolved before any run, and the recorder's usage and cost arithmetic."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.agents.base import CallContext
from evals.agents.frameworks import common, current_run
from evals.agents.frameworks.common import Outcome, Recorder, serving
from evals.model.errors import SuiteError
from evals.suite import load_suite
from tests.providers.helpers import make_context

SUITE = """\
prompts: ['{{{{q}}}}']
providers:
  - id: "{provider}"
tests:
  - vars: {{q: hi}}
"""


def _load(tmp_path: Path, provider: str) -> None:
    (tmp_path / "graph.py").write_text("graph = None\n")
    (tmp_path / "suite.yaml").write_text(SUITE.format(provider=provider))
    load_suite(tmp_path / "suite.yaml")


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ("langgraph:graph", "does not name a module and an object"),
        pytest.param(
            "pydantic-ai:nowhere.agent:agent",
            "no module 'nowhere.agent'",
            marks=pytest.mark.extra("pydantic-ai"),
        ),
        pytest.param(
            "openai-agents:missing.py:agent",
            "no module 'missing.py'",
            marks=pytest.mark.extra("openai-agents"),
        ),
        ("langchain:graph.py:graph", "unknown provider id"),
    ],
)
def test_bad_framework_ids_fail_at_load_with_the_line(
    tmp_path: Path, provider: str, message: str
) -> None:
    with pytest.raises(SuiteError, match=message) as raised:
        _load(tmp_path, provider)
    assert raised.value.line == 3 and raised.value.file.endswith("suite.yaml")


def test_a_missing_framework_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        common.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "langgraph" else real(name, *a),
    )
    with pytest.raises(SuiteError) as raised:
        _load(tmp_path, "langgraph:graph.py:graph")
    assert "needs the langgraph package" in raised.value.message
    assert "[langgraph] extra" in raised.value.fix
    assert raised.value.fix.endswith("pip install langgraph")


@pytest.mark.extra("langgraph")
def test_a_dotted_module_next_to_the_suite_passes_the_load_check(tmp_path: Path) -> None:
    _load(tmp_path, "langgraph:graph:graph")


def test_current_run_is_the_served_context_only_inside_the_block() -> None:
    context: CallContext = make_context()
    assert current_run() is None
    with serving(context):
        assert current_run() is context
    assert current_run() is None


steps = st.lists(
    st.tuples(
        st.sampled_from(["gpt-4o-mini", "house-model"]),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
    ),
    max_size=6,
)


@given(steps)
def test_usage_sums_model_steps_and_cost_is_known_only_when_every_step_is_priced(calls) -> None:
    recorder = Recorder({})
    for i, (model, tokens_in, tokens_out) in enumerate(calls):
        recorder.model_started(i, model)
        recorder.model_ended(i, input_tokens=tokens_in, output_tokens=tokens_out)
    response = recorder.response(Outcome(output="ok"), started=0.0)
    assert response.token_usage["numRequests"] == len(calls)
    if calls:
        assert response.token_usage["prompt"] == sum(c[1] for c in calls)
        assert response.token_usage["total"] == sum(c[1] + c[2] for c in calls)
    priced = [s.cost for s in response.trajectory]
    if calls and all(m == "gpt-4o-mini" for m, _, _ in calls):
        assert response.cost == pytest.approx(sum(priced))
    else:
        assert response.cost is None


def test_open_steps_of_a_failed_run_carry_the_error() -> None:
    recorder = Recorder({})
    recorder.model_started("m", "gpt-4o-mini")
    recorder.tool_started("t", "fetch", '{"key": "x"}')
    recorder.tool_ended("t", '{"value": 7}')
    recorder.tool_started("u", "fetch", "x")
    recorder.fail_open("boom")
    model, done, open_tool = recorder.steps
    assert model.error == "boom" and open_tool.error == "boom"
    assert done.error is None and done.result == {"value": 7}
    assert open_tool.arguments == {"input": "x"}
