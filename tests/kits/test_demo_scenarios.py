"""The demo's simulated model through the real SDKs: the lesson's scenarios, token counts,
reproducible stochastic runs, and the suite's improvement/regression picture."""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cases" / "trading-research"))

import trading_simulator as sim
from trading_tools import registry

from evals.agents.registry import build_agent
from evals.common.files import load_module
from evals.kits.simulator import simulated_client
from evals.kits.toolloop import AnthropicMessagesAdapter, OpenAIResponsesAdapter, run_tool_loop
from evals.plan.runs import build_plan
from evals.run.runner import Runner
from evals.suite import load_suite

CASE_DIR = Path(sim.__file__).resolve().parent
agent = load_module(CASE_DIR / "agent.py")

QUESTION = "¿Cuánto cambió en porcentaje el cierre de BUSI entre el 2024-03-15 y el 2024-03-22?"
ANSWER = "El cierre de BUSI varió un 6.45 % entre 2024-03-15 y 2024-03-22."
# (model calls, tool calls, tool errors, final answer) from the lesson's table.
SCENARIOS = {
    "correcto": (3, 3, 0, ANSWER),
    "herramienta_equivocada": (2, 1, 0, None),
    "argumentos_inventados": (4, 4, 1, ANSWER),
    "bucle": (6, 6, 5, None),
}
# Tokens per request the lesson's simulators received (tiktoken o200k_base).
LESSON_TOKENS = {
    ("correcto", "openai"): [48, 250, 332],
    ("correcto", "anthropic"): [53, 250, 340],
    ("herramienta_equivocada", "openai"): [53, 168],
    ("herramienta_equivocada", "anthropic"): [58, 177],
    ("argumentos_inventados", "openai"): [51, 176, 378, 460],
    ("argumentos_inventados", "anthropic"): [56, 187, 384, 474],
    ("bucle", "openai"): [48, 149, 234, 319, 404, 489],
    ("bucle", "anthropic"): [53, 160, 251, 342, 433, 524],
}
APIS = ("openai", "anthropic")


def loop_run(api: str, model: str, question: str = QUESTION, seed: int = 0, **kw: Any):
    log: list[int] = []
    client = simulated_client(api, sim.script, seed, log=log)
    if api == "openai":
        adapter = OpenAIResponsesAdapter(client, model)
    else:
        adapter = AnthropicMessagesAdapter(client, model, max_tokens=500)
    return run_tool_loop(adapter, registry(), question, **kw), log


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_lesson_scenarios_through_the_loop(api: str, scenario: str) -> None:
    model_calls, tool_calls, errors, answer = SCENARIOS[scenario]
    response, _ = loop_run(api, scenario)
    tools = [s for s in response.trajectory if s.kind == "tool"]
    assert sum(s.kind == "model" for s in response.trajectory) == model_calls
    assert len(tools) == tool_calls
    assert sum(s.error is not None for s in tools) == errors
    assert response.output == answer if answer else "%" not in (response.output or "")
    assert response.stop_reason == ("max_steps" if scenario == "bucle" else "done")
    if scenario == "bucle":
        assert response.output is None
        assert [s.error for s in tools[1:]] == ["llamada repetida: ya tienes el resultado"] * 5
    if scenario == "argumentos_inventados":
        assert tools[0].arguments == {"ticker": "BUSMAR", "fecha": "15/03/2024"}
        assert tools[0].error.startswith("argumentos no válidos: ticker: String should match")
    if scenario == "correcto":
        assert [s.name for s in tools] == ["precio", "precio", "calculadora"]
        assert tools[2].result == 6.4528
        assert tools[0].call_id != tools[1].call_id
    assert all(s.input_tokens and s.output_tokens for s in response.trajectory if s.kind == "model")


def lesson_loop(api: str, scenario: str, max_steps: int = 6) -> list[int]:
    """The lesson's own `agente_api`, unchanged in substance: no tools sent, same history."""
    log: list[int] = []
    oai = simulated_client("openai", sim.script, log=log)
    ant = simulated_client("anthropic", sim.script, log=log)
    tools = registry()
    history: list[Any] = [{"role": "user", "content": QUESTION}]
    seen: set[str] = set()
    for _ in range(max_steps):
        if api == "openai":
            r = oai.responses.create(model=scenario, input=history)
            calls = [
                (o.call_id, o.name, json.loads(o.arguments))
                for o in r.output
                if o.type == "function_call"
            ]
            history += [o.model_dump(exclude_none=True) for o in r.output]
        else:
            r = ant.messages.create(model=scenario, max_tokens=500, messages=history)
            calls = [(b.id, b.name, b.input) for b in r.content if b.type == "tool_use"]
            history.append(
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in r.content],
                }
            )
        if not calls:
            return log
        blocks = []
        for cid, name, args in calls:
            key = json.dumps([name, args], sort_keys=True)
            res = {"error": "llamada repetida: ya tienes el resultado"} if key in seen else None
            seen.add(key)
            res = res or tools.execute(name, args)
            if api == "openai":
                history.append(
                    {"type": "function_call_output", "call_id": cid, "output": json.dumps(res)}
                )
            else:
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": cid,
                        "content": json.dumps(res),
                        "is_error": "error" in res,
                    }
                )
        if blocks:
            history.append({"role": "user", "content": blocks})
    return log


@pytest.mark.parametrize(("scenario", "api"), list(LESSON_TOKENS))
def test_simulator_reproduces_the_lesson_token_counts(scenario: str, api: str) -> None:
    assert lesson_loop(api, scenario) == LESSON_TOKENS[(scenario, api)]


@pytest.mark.parametrize(("scenario", "api"), list(LESSON_TOKENS))
def test_loop_requests_are_the_lesson_requests_plus_the_tool_schemas(
    scenario: str, api: str
) -> None:
    response, log = loop_run(api, scenario)
    overhead = {b - a for a, b in zip(LESSON_TOKENS[(scenario, api)], log, strict=True)}
    assert len(overhead) == 1
    assert overhead.pop() > 100
    assert [s.input_tokens for s in response.trajectory if s.kind == "model"] == log
    assert response.token_usage["prompt"] == sum(log)


def test_lesson_loop_cost_grows_quadratically() -> None:
    log = lesson_loop("anthropic", "bucle", max_steps=30)
    assert log[:6] == [53, 160, 251, 342, 433, 524]
    assert log[24:30] == [2253, 2344, 2435, 2526, 2617, 2708]
    assert (sum(log[:6]), sum(log[:12]), sum(log)) == (1763, 6818, 41639)


@pytest.mark.slow
def test_loop_cost_grows_quadratically_with_steps() -> None:
    response, log = loop_run("anthropic", "bucle", max_steps=30)
    steps = [b - a for a, b in itertools.pairwise(log)]
    assert len(set(steps[1:])) == 1
    assert response.cost is None
    long = agent.baseline(QUESTION, {"config": {"model": "bucle", "max_steps": 12}}, {"seed": 0})
    short = agent.baseline(QUESTION, {"config": {"model": "bucle", "max_steps": 6}}, {"seed": 0})
    assert long["cost"] > 2 * short["cost"]


def _without_times(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in step.items() if k not in ("started_at", "ended_at")}
        for step in response["trajectory"]
    ]


@pytest.mark.parametrize("api", APIS)
def test_same_seed_same_trajectory(api: str) -> None:
    options = {"config": {"api": api}}
    for seed in range(5):
        first = agent.baseline(QUESTION, options, {"seed": seed})
        again = agent.baseline(QUESTION, options, {"seed": seed})
        assert _without_times(first) == _without_times(again)
        assert first["output"] == again["output"]


@pytest.mark.slow
def test_seeds_draw_the_policy_mix() -> None:
    outputs = collections.Counter()
    for seed in range(120):
        out = agent.baseline(QUESTION, {"config": {}}, {"seed": seed})["output"]
        outputs[
            "correct" if out == ANSWER else "27.88%" if out and "27.88%" in out else "other"
        ] += 1
    assert 0.3 < outputs["27.88%"] / 120 < 0.6
    assert 0.2 < outputs["correct"] / 120 < 0.5
    assert outputs["other"] > 0
    candidate = [
        agent.candidate(QUESTION, {"config": {}}, {"seed": s})["output"] for s in range(60)
    ]
    assert candidate.count(ANSWER) / 60 > 0.85


def test_choose_mode_follows_the_rates() -> None:
    question = sim.parse_question(
        "¿Qué titulares publicó la prensa sobre NAVE entre el 2024-06-10 y el 2024-06-14?"
    )
    modes = collections.Counter(sim.choose_mode("sim-candidate", question, s) for s in range(2000))
    rates = sim.POLICIES["sim-candidate"]["noticias"]
    for mode, rate in rates.items():
        assert abs(modes[mode] / 2000 - rate) < 0.04
    assert sim.choose_mode("bucle", question, 1) == "bucle"
    with pytest.raises(ValueError):
        sim.choose_mode("gpt-unknown", question, 1)


def test_suite_loads_with_documented_cases() -> None:
    suite = load_suite(CASE_DIR / "promptfooconfig.yaml")
    assert len(suite.cases) >= 24
    for case in suite.cases:
        assert case.why_it_exists
        assert case.priority in ("P0", "P1", "P2", "P3")
        assert case.tags
    tags = collections.Counter(t for c in suite.cases for t in c.tags)
    for tag in (
        "variacion",
        "fin-de-semana",
        "ticker-desconocido",
        "titulares",
        "fechas",
        "inyeccion",
        "calculadora",
    ):
        assert tags[tag] >= 3 if tag == "calculadora" else tags[tag] >= 4
    assert 5 <= tags["golden"] < len(suite.cases)
    assert suite.agent_labels == ["baseline", "candidate"]
    assert suite.evaluate_options.repeat == 5
    assert suite.gates.for_environment("pr").tags == ["golden"]
    assert suite.gates.for_environment("pr").repeat == 3


def run_suite(
    repeat: int, model: str | None = None, api: str | None = None
) -> dict[tuple[str, str], list[int]]:
    """Pass counts per (tag, agent) for a whole run of the demo suite."""
    suite = load_suite(CASE_DIR / "promptfooconfig.yaml")
    for provider in suite.providers:
        if model:
            provider.config["model"] = model
        if api:
            provider.config["api"] = api
    agents = {p.label: build_agent(p, suite.root) for p in suite.providers}
    runner = Runner(
        agents,
        suite_id=suite.suite_id,
        suite_root=suite.root,
        concurrency=8,
        suite_config=suite.raw,
    )
    records: list[Any] = []
    asyncio.run(runner.run(list(build_plan(suite, repeat)), records.append))
    tags = {c.id: c.tags for c in suite.cases}
    counts: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for record in records:
        assert record.status != "error", record.error
        for tag in tags[record.key.case_id]:
            counts[(tag, record.key.agent)][0] += record.passed
            counts[(tag, record.key.agent)][1] += 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("api", APIS)
def test_every_case_passes_when_the_model_behaves(api: str) -> None:
    counts = run_suite(1, model="correcto", api=api)
    assert all(passed == total for passed, total in counts.values()), dict(counts)


@pytest.mark.slow
def test_demo_shows_an_improvement_and_a_regression() -> None:
    counts = run_suite(5)
    rate = {k: passed / total for k, (passed, total) in counts.items()}
    assert counts[("variacion", "baseline")][1] == 30
    assert rate[("variacion", "baseline")] <= 0.4
    assert rate[("variacion", "candidate")] >= 0.85
    assert rate[("noticias", "baseline")] >= 0.8
    assert rate[("noticias", "candidate")] <= 0.5
    assert abs(rate[("fin-de-semana", "baseline")] - rate[("fin-de-semana", "candidate")]) <= 0.2
