"""The opt-in response cache: reusing agent responses between evaluations.

The cache (`evals run --cache`) keys a response by the provider (id and config), the
rendered prompt, the case's vars and the repeat index, so the k repeats of a case stay k
distinct samples while an unchanged run is not paid for twice. It lives in a SQLite file
under `.evals/cache/`. It is off by default: a nightly run must call the agents.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

import orjson

from evals.agents.base import Agent, CallContext
from evals.common.encoding import dump_json, encode_step
from evals.model.protocols import ResponseCache
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.model.trajectory import Step

DEFAULT_CACHE_PATH = Path(".evals") / "cache" / "responses.db"


def cache_key(provider: ProviderSpec, prompt: str, variables: dict[str, Any], repeat: int) -> str:
    """The cache key of one call: provider id and config, prompt, vars and repeat index."""
    document = dump_json(
        {
            "provider": provider.id,
            "config": provider.config,
            "transform": provider.transform,
            "prompt": prompt,
            "vars": variables,
            "repeat": repeat,
        }
    )
    return hashlib.sha256(document.encode()).hexdigest()


def _encode_response(response: AgentResponse) -> str:
    return dump_json(
        {
            "output": response.output,
            "token_usage": response.token_usage,
            "cost": response.cost,
            "metadata": response.metadata,
            "trajectory": [encode_step(step) for step in response.trajectory],
            "stop_reason": response.stop_reason,
            "finish_reason": response.finish_reason,
            "latency_ms": response.latency_ms,
            "trace": response.trace,
        }
    )


def _decode_response(text: str) -> AgentResponse:
    data = orjson.loads(text)
    data["trajectory"] = [Step.from_dict(step) for step in data["trajectory"]]
    return AgentResponse(**data, cached=True)


class SqliteResponseCache:
    """Agent responses by `cache_key`, in a SQLite file shared by processes and threads."""

    def __init__(self, path: Path = DEFAULT_CACHE_PATH) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, response TEXT NOT NULL)"
        )
        self._db.commit()

    def get(self, key: str) -> AgentResponse | None:
        """The cached response for `key`, marked `cached`, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return _decode_response(row[0]) if row else None

    def put(self, key: str, response: AgentResponse) -> None:
        """Remember a response (the first one stored for a key wins)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses (key, response) VALUES (?, ?)",
                (key, _encode_response(response)),
            )
            self._db.commit()

    def close(self) -> None:
        """Close the cache file."""
        with self._lock:
            self._db.close()


class CachedAgent:
    """An agent answered from the response cache when it can, and filling it when not.

    Errored responses are never cached, so a transient failure is retried next time.
    """

    def __init__(self, agent: Agent, provider: ProviderSpec, cache: ResponseCache) -> None:
        self.agent = agent
        self.provider = provider
        self.cache = cache
        self.label = agent.label

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """The cached response of this call, or the agent's (then cached)."""
        key = cache_key(self.provider, prompt, context.vars, context.repeat)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        response = await self.agent.call(prompt, context)
        if response.error is None:
            self.cache.put(key, response)
        return response

    async def aclose(self) -> None:
        """Close the agent and the cache."""
        await self.agent.aclose()
        self.cache.close()
