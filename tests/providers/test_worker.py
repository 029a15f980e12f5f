"""Python providers in a worker process: same answers as in-process, crashes isolated."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evals.agents.python_provider import PythonAgent
from evals.agents.validate import MalformedResponse
from evals.agents.worker_client import AgentCallFailed, WorkerCrashed
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec

from .helpers import make_context, run

AGENT = """
import asyncio, os, sys

def call_api(prompt, options, context):
    print("chatty agent output on stdout")
    if prompt == "crash":
        sys.stderr.write("segfault-like death\\n")
        sys.stderr.flush()
        os._exit(7)
    if prompt == "raise":
        raise ValueError("no such ticker")
    if prompt == "set":
        return {"output": {1, 2}}
    if prompt == "list":
        return ["not", "a", "response"]
    return {
        "output": f"{prompt} for {context['vars'].get('who')}",
        "tokenUsage": {"prompt": 3, "completion": 4},
        "cost": 0.01,
        "metadata": {"seed": context["seed"], "pid": os.getpid(), "config": options["config"]},
        "trajectory": [{"kind": "tool", "name": "precio", "arguments": {"t": "AAPL"}}],
    }

async def slow(prompt, options, context):
    if prompt == "hang":
        await asyncio.sleep(60)
    return {"output": "async " + prompt}

def rich(prompt, options, context):
    from evals.model.results import AgentResponse
    from evals.model.trajectory import Step
    return AgentResponse(
        output="rich", finish_reason="stop", trajectory=[Step(kind="model", name="m")]
    )
"""


def _agent(root: Path, fn: str = "call_api", **config) -> PythonAgent:
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    provider_id = "file://agent.py" + ("" if fn == "call_api" else f":{fn}")
    return PythonAgent(ProviderSpec(id=provider_id, label="p", config=config), root)


def _comparable(response: AgentResponse) -> tuple:
    metadata = {k: v for k, v in response.metadata.items() if k not in ("pid", "config")}
    return (
        response.output,
        response.token_usage,
        response.cost,
        metadata,
        [s.to_dict() for s in response.trajectory],
        response.finish_reason,
    )


@pytest.mark.parametrize("fn", ["call_api", "slow", "rich"])
def test_worker_gives_the_same_response_as_in_process(tmp_path, fn):
    async def both() -> tuple[AgentResponse, AgentResponse]:
        local = _agent(tmp_path, fn, isolation="process")
        inproc = _agent(tmp_path, fn)
        try:
            context = make_context("quote", who="ana")
            return await local.call("quote", context), await inproc.call("quote", context)
        finally:
            await local.aclose()
            await inproc.aclose()

    isolated, in_process = run(both())
    assert _comparable(isolated) == _comparable(in_process)
    assert isolated.output is not None


def test_worker_runs_in_another_process(tmp_path):
    import os

    async def go() -> AgentResponse:
        agent = _agent(tmp_path, worker=True)
        try:
            return await agent.call("x", make_context())
        finally:
            await agent.aclose()

    response = run(go())
    assert response.metadata["pid"] != os.getpid()
    # the provider's config, with promptfoo's basePath (the suite's folder) added
    assert response.metadata["config"] == {"worker": True, "basePath": os.path.relpath(tmp_path)}


def test_crash_fails_the_call_and_the_next_call_restarts_the_worker(tmp_path):
    async def go() -> tuple[BaseException, AgentResponse, int, int]:
        agent = _agent(tmp_path, worker=True)
        try:
            first = await agent.call("ok", make_context(who="a"))
            with pytest.raises(WorkerCrashed) as crashed:
                await agent.call("crash", make_context())
            second = await agent.call("ok", make_context(who="b"))
            return crashed.value, second, first.metadata["pid"], second.metadata["pid"]
        finally:
            await agent.aclose()

    error, after, pid_before, pid_after = run(go())
    assert "exited with code 7" in str(error)
    assert "segfault-like death" in str(error)
    assert after.output == "ok for b"
    assert pid_before != pid_after


def test_agent_exceptions_and_garbage_keep_the_worker(tmp_path):
    async def go() -> list[int]:
        agent = _agent(tmp_path, worker=True)
        pids = []
        try:
            pids.append((await agent.call("ok", make_context())).metadata["pid"])
            with pytest.raises(AgentCallFailed, match="ValueError: no such ticker"):
                await agent.call("raise", make_context())
            with pytest.raises(MalformedResponse, match="not JSON"):
                await agent.call("set", make_context())
            with pytest.raises(MalformedResponse, match="list"):
                await agent.call("list", make_context())
            pids.append((await agent.call("ok", make_context())).metadata["pid"])
        finally:
            await agent.aclose()
        return pids

    first, last = run(go())
    assert first == last


def test_cancelled_call_leaves_the_worker_usable(tmp_path):
    async def go() -> AgentResponse:
        agent = _agent(tmp_path, "slow", worker=True)
        try:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(agent.call("hang", make_context()), 0.5)
            return await agent.call("done", make_context())
        finally:
            await agent.aclose()

    assert run(go()).output == "async done"


def test_import_error_is_reported(tmp_path):
    (tmp_path / "broken.py").write_text("import no_such_module_here\n")

    async def go() -> None:
        spec = ProviderSpec(id="file://broken.py", label="b", config={"worker": True})
        agent = PythonAgent(spec, tmp_path)
        try:
            await agent.call("x", make_context())
        finally:
            await agent.aclose()

    with pytest.raises(WorkerCrashed, match="importing the provider failed: ModuleNotFoundError"):
        run(go())


def test_crash_is_an_error_row_and_other_runs_pass(write_suite):
    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import run_evaluation
    from evals.suite import load_suite

    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers:
          - {id: file://agent.py, label: isolated, config: {worker: true}}
        evaluateOptions: {maxConcurrency: 1}
        tests:
          - vars: {q: ok, who: ana}
            assert: [{type: equals, value: ok for ana}]
          - vars: {q: crash}
          - vars: {q: ok, who: luis}
            assert: [{type: equals, value: ok for luis}]
        """,
        files={"agent.py": AGENT},
    )
    result = run_evaluation(load_suite(path), RunOptions(use_store=False, progress=False))
    rows = sorted(result.records, key=lambda r: r.case_index)
    assert [(r.status, r.error_kind) for r in rows] == [
        ("pass", None),
        ("error", "agent_error"),
        ("pass", None),
    ]
    assert "exited with code 7" in rows[1].error


@pytest.mark.slow
def test_replies_that_cannot_travel_are_malformed(monkeypatch):
    import io
    import json

    from evals.agents import worker

    def nest(depth):
        value: list = []
        for _ in range(depth):
            value = [value]
        return value

    out = io.StringIO()
    serving = worker.Worker(lambda *args: None, out)
    monkeypatch.setattr(worker, "REPLY_LIMIT", 100)
    serving.reply(1, lambda: {"output": "x" * 200})
    serving.reply(2, lambda: {"output": "bad \ud800"})
    serving.reply(3, lambda: {"output": nest(100_000)})
    serving.reply(4, lambda: {"output": "fits"})
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3, 4]
    assert [r.get("kind") for r in replies] == ["malformed"] * 3 + [None]
    assert replies[3]["result"] == {"output": "fits"}
