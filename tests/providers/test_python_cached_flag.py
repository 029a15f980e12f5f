"""A Python provider's own `cached` flag: promptfoo's Python provider overwrites it (false on
every call it makes, true on a hit of its cache), and so does the harness."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.agents.python_provider import PythonAgent
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.run.cache import CachedAgent, SqliteResponseCache

from .helpers import make_context, run

AGENT = """
import asyncio

def call_api(prompt, options, context):
    return {"output": prompt, "cached": True, "latencyMs": 5000}

async def call_async(prompt, options, context):
    await asyncio.sleep(0)
    return call_api(prompt, options, context)
"""


def _agent(root: Path, fn: str, **config: object) -> PythonAgent:
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    provider_id = "file://agent.py" + ("" if fn == "call_api" else f":{fn}")
    return PythonAgent(ProviderSpec(id=provider_id, label="p", config=dict(config)), root)


@pytest.mark.parametrize(
    ("fn", "config"),
    [("call_api", {}), ("call_async", {}), ("call_api", {"worker": True})],
)
def test_a_python_providers_cached_flag_is_dropped_its_latency_kept(
    tmp_path: Path, fn: str, config: dict[str, object]
) -> None:
    agent = _agent(tmp_path, fn, **config)

    async def call() -> AgentResponse:
        try:
            return await agent.call("hi", make_context("hi"))
        finally:
            await agent.aclose()

    response = run(call())
    assert response.output == "hi"
    assert response.cached is False
    assert response.latency_ms == 5000.0


def test_the_response_cache_still_marks_its_hits(tmp_path: Path) -> None:
    spec = ProviderSpec(id="file://agent.py", label="p", config={})
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    cached = CachedAgent(
        PythonAgent(spec, tmp_path), spec, SqliteResponseCache(tmp_path / "cache.db")
    )

    async def twice() -> tuple[bool, bool, float | None]:
        try:
            first = await cached.call("hi", make_context("hi"))
            second = await cached.call("hi", make_context("hi"))
        finally:
            await cached.aclose()
        return first.cached, second.cached, second.latency_ms

    assert run(twice()) == (False, True, 5000.0)
