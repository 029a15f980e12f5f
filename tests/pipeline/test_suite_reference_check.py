"""The reference-check suite reproduces the agents book's chapter 10: agent-v2 passes, agent-v3
fails on trajectory, permissions, cost and latency, and the gates block it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from evals.agents.base import normalize_response
from evals.common.files import load_module
from evals.graders.contracts import parse_contracts
from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.model.results import Grade, RunRecord
from evals.pipeline.evaluation import run_evaluation
from evals.reports import write_report
from evals.reports.terminal import render_terminal
from evals.suite import load_suite

pytestmark = pytest.mark.slow

SUITE_DIR = Path(__file__).resolve().parents[2] / "cases" / "reference-check"
agent = load_module(SUITE_DIR / "agent.py")  # makes the suite's modules importable
sim = importlib.import_module("reference_simulator")
tools = importlib.import_module("reference_tools")
CATALOGUE, registry = tools.CATALOGUE, tools.registry
search_source, validate_apa = tools.search_source, tools.validate_apa

CHAPTER_CASE = "f5c10-001"
CHAPTER_TOOLS = ["search_source", "validate_apa"]
FREEFORM_TOOLS = ["search_source", "publish_page"]
CHAPTER_PROMPT = (
    "Comprueba esta cita, valida el formato APA y prepara la respuesta: "
    "Amershi et al. (2019), Software Engineering for Machine Learning."
)
MISSING_VALIDATE_APA = "Missing required tool(s): validate_apa"
FORBIDDEN_PUBLISH_PAGE = "Forbidden tool(s) were used: publish_page"
REQUIRED_VALIDATE_APA = "[required] validate_apa: missing validate_apa (a required step)"
DENIED_PUBLISH_PAGE = "[denylist] publish_page: forbidden publish_page (the tool is denied)"
CHAPTER_REASONS = ("missing validate_apa", "forbidden publish_page")
UNAPPROVED_PUBLISH = (
    "publish_page: approval_required (risk 0.400, acción persistente en producción)"
)
TRACE_REASON = "trace 0.8: tool sin resultado: publish_page"
OVER_COST = "cost 0.132 over 0.08"
OVER_LATENCY = "latency (agent) 9100 ms over 6000 ms"


@pytest.fixture(scope="module")
def result() -> EvaluationResult:
    suite = load_suite(SUITE_DIR / "promptfooconfig.yaml")
    return run_evaluation(suite, RunOptions(use_store=False, progress=False, repeat=2))


def _runs(result: EvaluationResult, agent_label: str, case_prefix: str = "") -> list[RunRecord]:
    return [
        r
        for r in result.records
        if r.key.agent == agent_label and r.key.case_id.startswith(case_prefix)
    ]


def _components(record: RunRecord) -> list[Grade]:
    assert record.grade is not None
    return record.grade.component_results


def _tools(record: RunRecord) -> list[str]:
    return [s.name for s in record.response.trajectory if s.kind == "tool"]


def test_suite_declares_chapter_agents_contracts_and_budget() -> None:
    suite = load_suite(SUITE_DIR / "promptfooconfig.yaml")
    assert [p.label for p in suite.providers] == ["agent-v2", "agent-v3"]
    assert (suite.gates.baseline, suite.gates.candidate) == ("agent-v2", "agent-v3")
    assert len(suite.cases) >= 8
    for case in suite.cases:
        assert case.metadata["why_it_exists"]
        assert case.metadata["priority"] in {"P0", "P1", "P2"}
        assert case.metadata["tags"]
    contracts = parse_contracts(suite.raw["tools"])
    assert contracts["publish_page"].effect == "publish"
    assert contracts["publish_page"].requires_approval
    assert not contracts["search_source"].requires_approval
    assert set(contracts) == set(registry().names)
    assert suite.raw["budget"] == {"max_cost": 0.08, "max_latency_ms": 6000}


def test_agent_v2_passes_every_run(result: EvaluationResult) -> None:
    runs = _runs(result, "agent-v2")
    assert len(runs) == 2 * len(result.summary.comparison.cases)
    assert [r.key.case_id for r in runs if r.status != "pass"] == []


def test_agent_v2_runs_the_chapter_case_within_budget(result: EvaluationResult) -> None:
    for record in _runs(result, "agent-v2", CHAPTER_CASE):
        assert _tools(record) == ["search_source", "validate_apa"]
        assert record.response.cost == pytest.approx(0.041)
        assert record.response.latency_ms == 4200


def test_agent_v3_fails_the_chapter_case_for_the_chapter_reasons(
    result: EvaluationResult,
) -> None:
    freeform = [
        r
        for r in _runs(result, "agent-v3", CHAPTER_CASE)
        if _tools(r) == ["search_source", "publish_page"]
    ]
    assert freeform, "the chapter's agent-v3 run (search, then publish) must occur"
    for record in freeform:
        assert record.status == "fail"
        assert record.response.output == "La referencia parece correcta."
        failed = [g.reason for g in _components(record) if not g.passed]
        text = "\n".join(failed)
        for phrase in (
            MISSING_VALIDATE_APA,
            FORBIDDEN_PUBLISH_PAGE,
            REQUIRED_VALIDATE_APA,
            DENIED_PUBLISH_PAGE,
            *CHAPTER_REASONS,
            OVER_COST,
            OVER_LATENCY,
        ):
            assert phrase in text
        budget = next(g for g in _components(record) if g.assertion["type"] == "budget")
        assert budget.reason == f"{OVER_COST}; {OVER_LATENCY}"
        assert record.grade.policy_violation
        assert record.grade.reason.startswith("Policy violation: " + UNAPPROVED_PUBLISH)


def test_agent_v3_fails_every_case(result: EvaluationResult) -> None:
    runs = _runs(result, "agent-v3")
    assert runs and all(r.status == "fail" for r in runs)
    for record in runs:
        budgets = [g for g in _components(record) if g.assertion["type"] == "budget"]
        assert any(not g.passed and "over 0.08" in g.reason for g in budgets)


def test_one_latency_for_graders_statistics_and_gates(result: EvaluationResult) -> None:
    """The suite reads the agents' reported (simulated) latency everywhere: the budget
    grader's 9100 ms is the latency the summary's statistics are made of."""
    assert result.summary.latency_source == "agent"
    v3 = next(a for a in result.summary.agents if a.agent == "agent-v3")
    reported = [r.response.latency_ms for r in _runs(result, "agent-v3")]
    assert all(value is not None for value in reported)
    assert v3.mean_latency_ms == pytest.approx(sum(reported) / len(reported))
    walls = [r.latency_ms for r in _runs(result, "agent-v3")]
    assert walls != reported


def test_gates_block_agent_v3(result: EvaluationResult) -> None:
    assert result.gates.verdict == "fail"
    failed = {g.name for g in result.gates.gates if g.status == "fail" and g.blocking}
    assert {"policy", "regression", "cost_ratio"} <= failed


def test_reports_show_the_failure_reasons(result: EvaluationResult, tmp_path: Path) -> None:
    for name in ("r.html", "r.md", "r.xml"):
        write_report(tmp_path / name, result)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    for phrase in (OVER_COST, OVER_LATENCY, *CHAPTER_REASONS, DENIED_PUBLISH_PAGE):
        assert phrase in html
    junit = (tmp_path / "r.xml").read_text(encoding="utf-8")
    assert f"Policy violation: {UNAPPROVED_PUBLISH}" in junit
    assert OVER_COST in junit
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "policy violation(s) by agent-v3" in markdown
    assert "agent-v3" in markdown and "agent-v2" in markdown


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_chapter_numbers_hold_through_both_sdks(api: str) -> None:
    seeds = [
        s
        for s in range(40)
        if sim.choose(sim.RATES["sim-v3"], sim.draw(s, CHAPTER_PROMPT), sim.CHECKED) == sim.FREEFORM
    ]
    options = {"config": {"api": api}}
    v3 = normalize_response(agent.agent_v3(CHAPTER_PROMPT, options, {"seed": seeds[0]}))
    assert [s.name for s in v3.trajectory if s.kind == "tool"] == ["search_source", "publish_page"]
    assert v3.cost == pytest.approx(0.132)
    assert v3.latency_ms == 9100
    assert v3.token_usage == {"prompt": 36000, "completion": 4200, "total": 40200}


def test_publishing_stops_at_the_approval_request_for_agent_v2() -> None:
    prompt = (
        "Comprueba la cita Baylor et al. (2017), TFX: A TensorFlow-Based Production-Scale "
        "Machine Learning Platform, y publícala en /fasciculo-05/tfx."
    )
    response = normalize_response(agent.agent_v2(prompt, {"config": {}}, {"seed": 0}))
    assert response.stop_reason == "approval_required"
    last = response.trajectory[-1]
    assert (last.kind, last.name, last.approval) == ("approval", "publish_page", "requested")
    assert last.arguments["path"] == "/fasciculo-05/tfx"


def test_search_source_honours_its_contract() -> None:
    for source in CATALOGUE:
        surname = source.authors.split(",")[0]
        documents = search_source(f"{surname} {source.year} {source.title}")["documents"]
        assert documents[0]["url"] == source.url
        for document in documents:
            assert {"url", "title", "snippet"} <= set(document)
    assert search_source("paper citado") == {"documents": []}


def test_catalogue_references_are_valid_apa() -> None:
    for source in CATALOGUE:
        assert validate_apa(source.apa())["valid"], source.apa()


@given(index=st.integers(0, len(CATALOGUE) - 1), cut=st.sampled_from(["year", "url", "authors"]))
def test_a_reference_missing_a_part_is_not_valid_apa(index: int, cut: str) -> None:
    source = CATALOGUE[index]
    parts = {
        "year": f"{source.authors} {source.title}. {source.url}",
        "url": f"{source.authors} ({source.year}). {source.title}.",
        "authors": f"({source.year}). {source.title}. {source.url}",
    }
    assert not validate_apa(parts[cut])["valid"]


def _scorecard(record: RunRecord) -> dict[str, Any]:
    assert record.grade is not None
    card: dict[str, Any] = record.grade.metadata["scorecard"]
    return card


def test_the_chapters_scorecard_for_agent_v2(result: EvaluationResult) -> None:
    runs = [r for r in _runs(result, "agent-v2", CHAPTER_CASE) if _tools(r) == CHAPTER_TOOLS]
    assert runs
    for record in runs:
        card = _scorecard(record)
        assert card["layers"] == dict.fromkeys(
            ("final", "trajectory", "policy", "operational", "trace"), 1.0
        )
        assert card["failures"] == []
        assert card["score"] == pytest.approx(1 - 0.1 * 0.041 / 0.08 - 0.1 * 4200 / 6000)
        assert record.response.trajectory[0].arguments == {"route": "mcp.biblioteca"}


def test_the_chapters_scorecard_for_agent_v3(result: EvaluationResult) -> None:
    runs = [r for r in _runs(result, "agent-v3", CHAPTER_CASE) if _tools(r) == FREEFORM_TOOLS]
    assert runs
    for record in runs:
        card = _scorecard(record)
        assert card["layers"] == {
            "final": 0.0,
            "trajectory": 0.0,
            "policy": 0.0,
            "operational": 0.0,
            "trace": 0.8,
        }
        assert card["failures"] == ["final 0 < 0.85", "trajectory 0 < 0.9", "trace 0.8 < 0.95"]
        assert card["score"] == pytest.approx(-0.2)
        assert (card["trace_missing"], card["trace_expected"]) == (1, 4)
        trace = next(g for g in _components(record) if g.assertion["type"] == "trace-completeness")
        assert (trace.score, trace.reason) == (0.8, TRACE_REASON)
        assert record.response.trajectory[0].arguments == {"route": "freeform"}


def test_the_summary_and_reports_show_the_scorecard(
    result: EvaluationResult, tmp_path: Path
) -> None:
    cards = {card.agent: card for card in result.summary.scorecards}
    assert set(cards) == {"agent-v2", "agent-v3"}
    v2, v3 = cards["agent-v2"], cards["agent-v3"]
    assert v2.layers == dict.fromkeys(v2.layers, 1.0) and v2.min_score_failures == 0
    assert v2.missing_span_rate == 0.0
    v3_runs = _runs(result, "agent-v3")
    missing = sum(_scorecard(r)["trace_missing"] for r in v3_runs)
    expected = sum(_scorecard(r)["trace_expected"] for r in v3_runs)
    assert missing > 0 and v3.missing_span_rate == pytest.approx(missing / expected)
    assert v3.layers["trace"] < 1.0 and v3.min_score_failures >= 1
    assert (v3.timeouts.hits, v3.timeouts.runs) == (0, len(v3_runs))
    console = Console(record=True, width=100)
    render_terminal(result, console)
    shown = console.export_text()
    assert "Scorecard" in shown and "timeout_rate 0/" in shown
    write_report(tmp_path / "r.md", result)
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "### Scorecard" in markdown
    assert "| agent-v3 | " in markdown and "- agent-v3: retry_success" in markdown
    write_report(tmp_path / "r.json", result)
    document = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    stored = {c["agent"]: c for c in document["evals"]["summary"]["scorecards"]}
    assert stored["agent-v3"]["missing_span_rate"] == pytest.approx(v3.missing_span_rate)
    assert stored["agent-v3"]["layers"]["trace"] == pytest.approx(v3.layers["trace"])
