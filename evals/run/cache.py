"""The opt-in response cache: reusing agent responses between evaluations.

The cache (`evals run --cache`) keys a response by the agent fingerprint (the provider's
id, config and code, see `evals.suite.fingerprint`), the agent's label, the request (the
rendered prompt and the case's vars) and the run's seed and repeat index. A changed
agent has another fingerprint and never receives an old answer; another `--seed` draws
other seeds and misses; the k repeats of a case stay k distinct samples. It lives in a
SQLite file, `.evals/cache/responses.db` unless told otherwise. It is off by default: a
nightly run must call the agents.

`evals ci pr` fills a cache from the stored runs of the latest nightly (`prime`), so
main's agent is not paid for twice when its fingerprint is the nightly's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from evals.agents.base import Agent, CallContext
from evals.common.encoding import dump_json, encode_step
from evals.common.faults import fault_message, is_store_fault
from evals.common.world import apply_changes, diff, digest, read_state
from evals.model.errors import HarnessFault
from evals.model.protocols import ResponseCache
from evals.model.results import AgentResponse, RunRecord
from evals.model.suite import ProviderSpec
from evals.model.trajectory import Step
from evals.tracing.redact import Redactor

DEFAULT_CACHE_PATH = Path(".evals") / "cache" / "responses.db"
WORLD_CHANGES = "evals_world_changes"
"""The metadata key of a cached response holding what its call changed in the world state."""


def cache_key(
    agent_fingerprint: str,
    agent: str,
    prompt: str,
    variables: dict[str, Any],
    seed: int,
    repeat: int,
    state: str | None = None,
) -> str:
    """The cache key of one call: agent fingerprint and label, request, seed and repeat,
    and the digest of the world state the call starts from (for a suite with an
    `environment:`)."""
    fields: dict[str, Any] = {
        "agent_fingerprint": agent_fingerprint,
        "agent": agent,
        "prompt": prompt,
        "vars": variables,
        "seed": seed,
        "repeat": repeat,
    }
    if state is not None:
        fields["state"] = state
    return hashlib.sha256(dump_json(fields).encode()).hexdigest()


def agent_identity(provider: ProviderSpec) -> str:
    """The provider's agent fingerprint; for a spec built without one (not loaded from a
    suite), its id, config and transform."""
    if provider.fingerprint:
        return provider.fingerprint
    return dump_json(
        {"id": provider.id, "config": provider.config, "transform": provider.transform}
    )


def _primed(record: RunRecord, fingerprint: str) -> list[tuple[str, AgentResponse]]:
    """(cache key, response) of each call a stored run made: the run's one call, or each
    turn of a conversation."""
    if "conversation" not in record.response.metadata:
        world = record.response.metadata.get("environment") or {}
        state = world.get("initial_digest")
        response = record.response
        if state is not None:
            metadata = {**response.metadata, WORLD_CHANGES: world.get("changes") or []}
            metadata.pop("environment", None)
            response = replace(response, metadata=metadata)
        key = cache_key(
            fingerprint,
            record.key.agent,
            record.prompt,
            record.vars,
            record.seed,
            record.key.repeat,
            state,
        )
        return [(key, response)]
    from evals.agents.simulated_user import recorded_calls

    user = record.response.metadata["conversation"].get("user") or {}
    primed = []
    for call in recorded_calls(record.prompt, record.vars, record.response):
        if call.side == "agent":
            identity, label = fingerprint, record.key.agent
        elif user.get("fingerprint"):
            identity, label = str(user["fingerprint"]), str(user.get("label"))
        else:
            continue
        key = cache_key(
            identity, label, call.prompt, call.variables, record.seed, record.key.repeat, call.state
        )
        primed.append((key, call.response))
    return primed


def cacheable(record: RunRecord) -> bool:
    """True for a run whose full response is at hand and did not fail."""
    return record.status != "error" and record.response.error is None and bool(record.prompt)


def cache_hits(records: list[RunRecord]) -> dict[str, tuple[int, int]]:
    """(runs answered from the cache, runs) per agent label."""
    counts: dict[str, list[int]] = {}
    for record in records:
        tally = counts.setdefault(record.key.agent, [0, 0])
        tally[0] += bool(record.response.cached)
        tally[1] += 1
    return {agent: (hits, runs) for agent, (hits, runs) in counts.items()}


def describe_hits(hits: dict[str, tuple[int, int]]) -> str:
    """One line: the cache's hit rate overall and per agent."""
    total_hits = sum(h for h, _ in hits.values())
    total = sum(n for _, n in hits.values())
    share = f" ({total_hits / total:.0%})" if total else ""
    agents = ", ".join(f"{agent} {h}/{n}" for agent, (h, n) in sorted(hits.items()))
    return f"response cache: {total_hits} of {total} runs answered from the cache{share}: {agents}"


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
            "log_probs": response.log_probs,
        }
    )


def _decode_response(text: str) -> AgentResponse:
    data = orjson.loads(text)
    data["trajectory"] = [Step.from_dict(step) for step in data["trajectory"]]
    return AgentResponse(**data, cached=True)


class SqliteResponseCache:
    """Agent responses by `cache_key`, in a SQLite file shared by processes and threads.

    A cache file that cannot be read or written (damaged, on a full disk) raises a
    HarnessFault naming it: the evaluation stops as a store fault does, resumable."""

    def __init__(self, path: Path = DEFAULT_CACHE_PATH) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        with self._faults():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses "
                "(key TEXT PRIMARY KEY, response TEXT NOT NULL)"
            )
            self._db.commit()

    @contextlib.contextmanager
    def _faults(self) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            if not is_store_fault(exc):
                raise
            where = f"the response cache at {self.path}"
            raise HarnessFault(fault_message(exc, where)) from exc

    def get(self, key: str) -> AgentResponse | None:
        """The cached response for `key`, marked `cached`, or None."""
        with self._lock, self._faults():
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return _decode_response(row[0]) if row else None

    def put(self, key: str, response: AgentResponse) -> None:
        """Remember a response (the first one stored for a key wins)."""
        with self._lock, self._faults():
            self._db.execute(
                "INSERT OR IGNORE INTO responses (key, response) VALUES (?, ?)",
                (key, _encode_response(response)),
            )
            self._db.commit()

    def prime(self, records: list[RunRecord], fingerprints: dict[str, str]) -> int:
        """Remember the responses of stored runs made by agents of known fingerprints.

        `fingerprints` maps each agent label to the agent fingerprint it had when the
        runs were made; runs of other agents, errored runs and slim records are skipped.
        A conversation (a simulated user's run) offers each turn of both sides: the agent's
        answers under its fingerprint, the user's under the user provider's.
        Returns how many responses were offered.
        """
        offered = 0
        with self._lock, self._faults():
            for record in records:
                fingerprint = fingerprints.get(record.key.agent)
                if fingerprint and cacheable(record):
                    for key, response in _primed(record, fingerprint):
                        self._db.execute(
                            "INSERT OR IGNORE INTO responses (key, response) VALUES (?, ?)",
                            (key, _encode_response(response)),
                        )
                        offered += 1
            self._db.commit()
        return offered

    def close(self) -> None:
        """Close the cache file (a file that failed is closed as well as it can be: its
        fault has been reported already)."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()


class CachedAgent:
    """An agent answered from the response cache when it can, and filling it when not.

    Errored responses are never cached, so a transient failure is retried next time.
    The cache file holds responses as the results store does: with `secrets` (the
    suite's known secret values) and key shapes masked. Its keys are hashes.
    """

    def __init__(
        self,
        agent: Agent,
        provider: ProviderSpec,
        cache: ResponseCache,
        secrets: frozenset[str] = frozenset(),
    ) -> None:
        self.agent = agent
        self.provider = provider
        self.cache = cache
        self.label = agent.label
        self.redactor = Redactor(secrets=secrets)

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """The cached response of this call, or the agent's (then cached).

        In a suite with an `environment:`, the key holds the digest of the world state the
        call starts from, the cached entry what the call changed in it, and a call answered
        from the cache makes those changes again (its tools do not run this time).
        """
        world = Path(context.environment) if context.environment else None
        before = None if world is None else await asyncio.to_thread(read_state, world)
        key = cache_key(
            agent_identity(self.provider),
            self.label,
            prompt,
            context.vars,
            context.seed,
            context.repeat,
            None if before is None else digest(before),
        )
        # the cache may be a file or a remote actor: neither blocks the event loop
        cached = await asyncio.to_thread(self.cache.get, key)
        if cached is not None:
            changes = cached.metadata.pop(WORLD_CHANGES, None)
            if world is not None and changes:
                await asyncio.to_thread(apply_changes, world, changes)
            return cached
        response = await self.agent.call(prompt, context)
        if response.error is None:
            stored = response
            if world is not None:
                after = await asyncio.to_thread(read_state, world)
                changes = diff(before, after)
                stored = replace(response, metadata={**response.metadata, WORLD_CHANGES: changes})
            await asyncio.to_thread(self.cache.put, key, self.redactor.scrub(stored))
        return response

    async def aclose(self) -> None:
        """Close the agent and the cache."""
        await self.agent.aclose()
        self.cache.close()
