"""Model-graded assertions against a local OpenAI-compatible judge (no network)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from assertion_kit import graded
from judge_server import JudgeServer, bag_of_words, base_url, judge_server

from evals.grade.grading import grade_case_async
from evals.graders.base import GraderError
from evals.graders.judge import (
    DEFAULT_EMBEDDING_GRADER,
    apply_grader,
    cosine_similarity,
    resolve_provider,
)
from evals.graders.judge_grading import render_rubric
from evals.graders.rag import faithfulness_score
from evals.model.results import AgentResponse, Grade
from evals.model.suite import Assertion, Case
from evals.model.trajectory import Step


@pytest.fixture(scope="module")
def server() -> Iterator[JudgeServer]:
    with judge_server() as running:
        yield running


def _provider(server: JudgeServer, model: str = "judge") -> dict[str, Any]:
    return {"id": f"openai:chat:{model}", "config": {"apiBaseUrl": base_url(server), "apiKey": "k"}}


def _embedder(server: JudgeServer) -> dict[str, Any]:
    return {
        "id": "openai:embedding:bow",
        "config": {"apiBaseUrl": base_url(server), "apiKey": "k"},
    }


def grade(
    kind: str,
    output: Any,
    value: Any = None,
    *,
    provider: Any = None,
    variables: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    prompt: str = "What is the capital of France?",
    trajectory: list[Step] | None = None,
    threshold: float | None = None,
) -> Grade:
    raw = {"type": kind, "value": value, "provider": provider, "threshold": threshold}
    assertion = Assertion(
        type=kind,
        value=value,
        threshold=threshold,
        provider=provider,
        raw={k: v for k, v in raw.items() if v is not None},
    )
    return graded(
        assertion,
        output,
        AgentResponse(output=output, trajectory=trajectory or []),
        prompt=prompt,
        variables=variables or {},
        latency_ms=1.0,
        suite_root=Path("."),
        case_options=options or {},
    )


def test_llm_rubric_passes_and_asks_for_a_json_schema(server: JudgeServer) -> None:
    passed = grade(
        "llm-rubric", "Paris is the capital", "mentions Paris", provider=_provider(server)
    )
    assert passed.passed and passed.score == 1.0
    assert passed.reason == "looked for 'paris'"
    assert passed.tokens_used["total"] == 15
    request = server.requests[-1]
    assert request["response_format"]["type"] == "json_schema"
    assert "<Rubric>\nmentions Paris\n</Rubric>" in request["messages"][1]["content"]
    failed = grade("llm-rubric", "Lyon", "mentions Paris", provider=_provider(server))
    assert not failed.passed and failed.score == 0.0


def test_not_llm_rubric_inverts_verdict_and_score(server: JudgeServer) -> None:
    result = grade("not-llm-rubric", "Lyon", "mentions Paris", provider=_provider(server))
    assert result.passed and result.score == 1.0


def test_threshold_caps_a_passing_judge(server: JudgeServer) -> None:
    steps = [Step(kind="tool", name="search_orders")]
    result = grade(
        "trajectory:goal-success",
        "Shipped yesterday",
        "Tell the user whether the order shipped",
        provider=_provider(server),
        trajectory=steps,
        threshold=0.9,
    )
    assert not result.passed and result.score == 0.8
    assert result.reason == "used a tool"


def test_goal_success_inverse_words_the_reason(server: JudgeServer) -> None:
    result = grade(
        "not-trajectory:goal-success",
        "done",
        {"goal": "Delete the database"},
        provider=_provider(server),
        trajectory=[Step(kind="tool", name="drop")],
    )
    assert not result.passed
    assert result.reason == "Agent unexpectedly achieved the goal: Delete the database"


def test_judge_without_json_is_a_grader_error(server: JudgeServer) -> None:
    result = grade("llm-rubric", "x", "anything", provider=_provider(server, "broken"))
    assert result.errored and not result.passed
    assert result.reason == "Could not extract JSON from llm-rubric response"


@pytest.mark.slow
def test_judge_http_failure_is_a_grader_error_not_a_verdict(server: JudgeServer) -> None:
    result = grade("not-llm-rubric", "x", "anything", provider=_provider(server, "down"))
    assert result.errored and not result.passed
    assert "500" in result.reason


def test_prose_answers_are_parsed_when_no_schema_is_supported(server: JudgeServer) -> None:
    provider = {"id": "openai:chat:judge", "config": {**_provider(server)["config"]}}
    provider["config"]["response_format"] = {"type": "text"}
    result = grade("llm-rubric", "Paris", "says Paris", provider=provider)
    assert result.passed and result.reason == "looked for 'paris'"


@pytest.mark.parametrize(
    ("output", "category", "passed"),
    [
        ("Paris", "C", True),
        ("Paris France", "B", True),
        ("Lyon", "D", False),
    ],
)
def test_factuality_categories(
    server: JudgeServer, output: str, category: str, passed: bool
) -> None:
    result = grade("factuality", output, "Paris", provider=_provider(server))
    assert result.passed is passed
    assert result.reason == f"word sets compared: {category}"


def test_factuality_scores_come_from_options(server: JudgeServer) -> None:
    options = {"provider": _provider(server), "factuality": {"superset": 0.5}}
    result = grade("factuality", "Paris France", "Paris", options=options)
    assert result.passed and result.score == 0.5


def test_closed_qa_reads_the_final_letter(server: JudgeServer) -> None:
    yes = grade("model-graded-closedqa", "It is Paris", "names Paris", provider=_provider(server))
    assert yes.passed and yes.reason.startswith("The submission meets the criterion:\n")
    no = grade("model-graded-closedqa", "It is Lyon", "names Paris", provider=_provider(server))
    assert not no.passed
    assert no.reason.startswith("The submission does not meet the criterion:\n")


def test_g_eval_scores_out_of_ten_and_averages_lists(server: JudgeServer) -> None:
    single = grade("g-eval", "a polite reply", "The reply is polite", provider=_provider(server))
    assert single.passed and single.score == pytest.approx(0.9)
    both = grade(
        "g-eval", "a polite reply", ["is polite", "is concise"], provider=_provider(server)
    )
    assert both.score == pytest.approx((0.9 + 0.2) / 2)
    assert not both.passed
    assert both.reason == "reply checked for polite\n\nreply checked for concise"
    assert len([r for r in server.requests if "steps" in str(r["messages"])]) >= 3


def test_context_recall_counts_attributed_sentences(server: JudgeServer) -> None:
    variables = {"context": "Paris is the capital of France. It has the Louvre."}
    result = grade(
        "context-recall",
        "irrelevant",
        "Paris is the capital of France. Lyon has silk.",
        provider=_provider(server),
        variables=variables,
        threshold=0.5,
    )
    assert result.score == 0.5 and result.passed
    assert result.reason == "Recall 0.50 is >= 0.5"


def test_context_relevance_share_of_context_units(server: JudgeServer) -> None:
    variables = {
        "query": "capital of France",
        "context": ["Paris is the capital of France.", "Bananas are yellow."],
    }
    result = grade("context-relevance", "x", provider=_provider(server), variables=variables)
    assert result.score == 0.5
    assert result.reason == "Context relevance 0.50 is >= 0"


def test_context_faithfulness_flags_unsupported_statements(server: JudgeServer) -> None:
    variables = {"query": "Tell me about Paris", "context": "Paris is the capital of France."}
    result = grade(
        "context-faithfulness",
        "Paris is the capital of France. Paris has ten million dragons.",
        provider=_provider(server),
        variables=variables,
        threshold=0.9,
    )
    assert result.score == 0.5 and not result.passed
    assert result.reason == "Faithfulness 0.50 is < 0.9"


def test_context_is_required(server: JudgeServer) -> None:
    result = grade("context-relevance", "x", provider=_provider(server), variables={"query": "q"})
    assert result.errored and "Context is required" in result.reason


def test_similar_uses_cosine_of_embeddings(server: JudgeServer) -> None:
    provider = _embedder(server)
    close = grade("similar", "the cat sat on the mat", "the cat sat on a mat", provider=provider)
    expected = cosine_similarity(
        bag_of_words("the cat sat on a mat"), bag_of_words("the cat sat on the mat")
    )
    assert close.score == pytest.approx(expected)
    assert close.passed
    far = grade("similar", "stock prices rose", ["the cat sat", "dogs bark"], provider=provider)
    assert not far.passed
    assert far.reason == "None of the provided values met the similarity threshold"
    inverse = grade("not-similar", "stock prices rose", "the cat sat", provider=provider)
    assert inverse.passed and inverse.score == pytest.approx(1.0)


def test_similar_rejects_a_chat_provider(server: JudgeServer) -> None:
    result = grade("similar", "a", "a", provider=_provider(server))
    assert result.errored
    assert result.reason == (
        "Error: Provider openai:chat:judge is not a valid embedding provider for 'similarity check'"
    )


def test_answer_relevance_uses_both_provider_kinds(server: JudgeServer) -> None:
    provider = {"text": _provider(server), "embedding": _embedder(server)}
    result = grade(
        "answer-relevance",
        "Paris is the capital of France",
        provider=provider,
        variables={"query": "what is the capital of France"},
        threshold=0.5,
    )
    assert result.passed
    assert len(result.metadata["generatedQuestions"]) == 3


def test_grade_case_async_awaits_judges_on_the_running_loop(server: JudgeServer) -> None:
    case = Case(
        index=0,
        id="c",
        description="",
        vars={},
        asserts=[
            Assertion(type="llm-rubric", value="mentions Paris", raw={"type": "llm-rubric"}),
            Assertion(type="contains", value="Paris", raw={"type": "contains"}),
        ],
        options={"provider": _provider(server)},
    )
    response = AgentResponse(output="Paris")
    result = asyncio.run(
        grade_case_async(
            case,
            response,
            output="Paris",
            prompt="q",
            latency_ms=1.0,
            suite_root=Path("."),
        )
    )
    assert result.passed
    assert [g.passed for g in result.component_results] == [True, True]


def test_rubric_prompts_render_object_vars_as_json() -> None:
    rendered = render_rubric('[{"role":"user","content":"{{ output }}"}]', {"output": {"a": 1}})
    assert rendered == '[{"role":"user","content":"{\\"a\\":1}"}]'
    assert render_rubric("Q: {{ q }}", {"q": "x"}) == "Q: x"


def test_faithfulness_verdict_parsing() -> None:
    assert faithfulness_score("Final verdict for each statement in order: Yes. No. Yes.", 3) == (
        pytest.approx(2 / 3)
    )
    assert faithfulness_score("1. Verdict: Yes\n2. Verdict: No", 4) == pytest.approx(0.25)
    assert faithfulness_score("nothing", 2) == 0.0


def test_command_line_grader_replaces_only_inherited_providers() -> None:
    inherited = Case(0, "a", "", {}, [], options={"provider": "openai:chat:default"})
    own = Case(1, "b", "", {}, [], options={"provider": "openai:chat:mine"})
    bare = Case(2, "c", "", {}, [])
    default_test = {"options": {"provider": "openai:chat:default"}}
    apply_grader([inherited, own, bare], default_test, "anthropic:messages:judge")
    assert inherited.options["provider"] == "anthropic:messages:judge"
    assert own.options["provider"] == "openai:chat:mine"
    assert bare.options["provider"] == "anthropic:messages:judge"


def test_embedding_purpose_falls_back_to_the_default_embedder() -> None:
    from evals.graders.base import GradeContext
    from evals.model.results import AgentResponse as Response

    ctx = GradeContext(
        output="",
        assertion=Assertion(type="similar"),
        value=None,
        inverse=False,
        prompt="",
        vars={},
        response=Response(),
        latency_ms=0.0,
        suite_root=Path("."),
    )
    assert resolve_provider(ctx, "embedding", "similarity check").id == DEFAULT_EMBEDDING_GRADER
    ctx.case_options = {"provider": ["openai:chat:x"]}
    with pytest.raises(GraderError, match="nested in an array"):
        resolve_provider(ctx, "text", "check")
