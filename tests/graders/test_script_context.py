"""The `context` of javascript, python and ruby assertions, as promptfoo 0.121 builds it:
the whole test (defaultTest merged in), the provider (an id() method in JavaScript, no id
across JSON), the logProbs and metadata keys, the providerResponse and an assertion's
config, worked out once per run."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from assertion_kit import graded, make_assertion
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.common import jsengine, jsfiles
from evals.grade.grading import grade_case
from evals.graders.base import GradeContext
from evals.graders.scripts import assertion_context, javascript_context
from evals.model.results import AgentResponse
from evals.model.suite import Case
from evals.suite import load_suite

SUITE = """\
prompts: ['Say {{ word }}']
providers: [echo]
defaultTest:
  metadata: {suite: ctx}
  assert:
    - {type: contains, value: Say}
tests:
  - description: whole
    vars: {word: [one, two]}
    threshold: 0.5
    assert:
      - {type: javascript, value: 'true'}
  - vars: {word: three}
    options: {transform: 'output + "!"'}
"""


def _cases(write_suite: Any, text: str = SUITE) -> list[Case]:
    return load_suite(write_suite(text)).cases


def test_a_case_holds_the_test_as_promptfoo_grades_it(write_suite: Any) -> None:
    one, two, three = _cases(write_suite)
    assert list(one.test) == ["description", "vars", "threshold", "assert", "options", "metadata"]
    assert one.test["vars"] == {"word": "one"} and two.test["vars"] == {"word": "two"}
    assert [a["type"] for a in one.test["assert"]] == ["contains", "javascript"]
    assert one.test["metadata"] == {"suite": "ctx"} and one.test["threshold"] == 0.5
    assert list(three.test) == ["vars", "options", "assert", "metadata"]
    assert three.test["options"] == {"transform": 'output + "!"'}


def _context(
    case: Case | None = None,
    *,
    provider_id: str = "echo",
    agent: str = "echo",
    response: AgentResponse | None = None,
    config: dict[str, Any] | None = None,
    suite_root: Path = Path("."),
) -> GradeContext:
    assertion = make_assertion("javascript", "true", **({"config": config} if config else {}))
    return GradeContext(
        output="Say hi",
        assertion=assertion,
        value="true",
        inverse=False,
        prompt="Say hi",
        vars={"word": "hi"},
        response=response or AgentResponse(output="Say hi"),
        latency_ms=1.0,
        suite_root=suite_root,
        agent=agent,
        provider_id=provider_id,
        provider_config={"k": 1},
        case_test=case.test if case is not None else {},
    )


def _js(expression: str, ctx: GradeContext) -> Any:
    """The value of a JavaScript expression over a check's `output` and `context`."""
    code = f"({{pass: true, score: 1, reason: JSON.stringify({expression})}})"
    result = jsengine.call("assertion", code, ctx.output, javascript_context(ctx))
    return json.loads(result["reason"])


def test_javascript_sees_promptfoos_keys_and_a_provider_with_an_id_method() -> None:
    ctx = _context()
    assert _js("Object.keys(context).join()", ctx) == (
        "prompt,vars,test,logProbs,provider,providerResponse,metadata"
    )
    assert _js("'logProbs' in context && context.logProbs === undefined", ctx) is True
    assert _js("typeof context.provider.id === 'function' && context.provider.id()", ctx) == "echo"
    assert (
        _js("JSON.stringify(context.provider)", ctx)
        == '{"label":"","config":{"k":1,"basePath":"."}}'
    )
    assert _js("[context.providerResponse.raw, context.providerResponse.isRefusal]", ctx) == [
        "Say hi",
        False,
    ]


def test_a_labelled_provider_keeps_its_label_and_other_providers_answer_no_echo_fields() -> None:
    ctx = _context(provider_id="file://agent.py", agent="mine")
    assert _js("context.provider.label", ctx) == "mine"
    assert _js("context.provider.id()", ctx) == "file://agent.py"
    assert _js("'metadata' in context || 'raw' in context.providerResponse", ctx) is False
    assert _js("context.providerResponse.cached", ctx) is False


def test_an_assertion_config_comes_before_metadata() -> None:
    ctx = _context(config={"level": 2})
    assert _js("Object.keys(context).join()", ctx) == (
        "prompt,vars,test,logProbs,provider,providerResponse,config,metadata"
    )
    assert list(assertion_context(ctx))[-2:] == ["config", "metadata"]


def test_python_receives_what_crosses_promptfoos_json_boundary() -> None:
    context = assertion_context(_context())
    assert list(context) == ["prompt", "vars", "test", "provider", "providerResponse", "metadata"]
    assert "id" not in context["provider"] and context["provider"]["label"] == ""
    with_probs = assertion_context(_context(response=AgentResponse(output="x", log_probs=[-0.5])))
    assert with_probs["logProbs"] == [-0.5]


def test_the_whole_test_reaches_every_script_language(write_suite: Any) -> None:
    case = _cases(write_suite)[0]
    ctx = _context(case)
    assert _js("context.test.description + context.test.assert.length", ctx) == "whole2"
    assert assertion_context(ctx)["test"]["metadata"] == {"suite": "ctx"}


def test_the_context_is_written_once_per_run() -> None:
    ctx = _context()
    assert javascript_context(ctx) is javascript_context(ctx)
    assert assertion_context(ctx)["test"] is assertion_context(ctx)["test"]


def test_a_javascript_file_check_gets_the_same_context(tmp_path: Path) -> None:
    source = "module.exports = (output, context) => context.provider.id() + context.test.vars.word"
    (tmp_path / "check.js").write_text(source, encoding="utf-8")
    ctx = _context(suite_root=tmp_path)
    result = jsfiles.call_check(tmp_path / "check.js", None, ctx.output, javascript_context(ctx))
    assert result == "echohi"


def test_grading_a_case_passes_the_context_to_its_checks(write_suite: Any) -> None:
    text = SUITE.replace("value: 'true'", "value: 'context.test.description === \"whole\"'")
    case = _cases(write_suite, text)[0]
    grade = grade_case(
        case,
        AgentResponse(output="Say one"),
        output="Say one",
        prompt="Say one",
        latency_ms=1.0,
        suite_root=".",
        agent="echo",
        provider_id="echo",
    )
    assert [c.passed for c in grade.component_results] == [True, True]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(variables=st.dictionaries(st.text(min_size=1, max_size=5), _JSON, max_size=4))
def test_vars_reach_javascript_unchanged(variables: dict[str, Any]) -> None:
    ctx = _context()
    ctx.vars = variables
    assert json.loads(_js("JSON.stringify(context.vars)", ctx)) == variables


def test_non_finite_numbers_reach_javascript_as_numbers() -> None:
    ctx = _context()
    ctx.vars = {"x": math.nan, "y": -math.inf}
    assert _js("Number.isNaN(context.vars.x) && context.vars.y === -Infinity", ctx) is True


def test_a_javascript_file_value_of_another_assertion_gets_the_context(tmp_path: Path) -> None:
    (tmp_path / "expected.js").write_text(
        "module.exports = (output, context) => context.provider.id() + ':' + context.prompt",
        encoding="utf-8",
    )
    assertion = make_assertion("equals", "file://expected.js")
    grade = graded(
        assertion,
        "echo:Say hi",
        AgentResponse(output="echo:Say hi"),
        prompt="Say hi",
        variables={},
        latency_ms=1.0,
        suite_root=tmp_path,
        agent="echo",
        provider_id="echo",
    )
    assert grade.passed, grade.reason
