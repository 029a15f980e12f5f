"""Reusing agent responses: the opt-in response cache, and regrading stored runs.

The cache (`evals run --cache`) keys a response by the provider (id and config), the
rendered prompt, the case's vars and the repeat index, so the k repeats of a case stay k
distinct samples while an unchanged run is not paid for twice. It lives in a SQLite file
under `.evals/cache/`. It is off by default: a nightly run must call the agents.

Regrading (`evals regrade EVAL_ID`) re-applies a suite's current graders and gates to the
responses stored with an evaluation, without calling any agent, and stores the result as
a new evaluation that names its source.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from evals.agents.base import Agent, CallContext
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse, RunRecord
from evals.model.suite import ProviderSpec, Suite
from evals.model.trajectory import Step
from evals.store.codec import dump_json, encode_step

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


class ResponseCache:
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


def regrade_records(suite: Suite, records: list[RunRecord]) -> tuple[list[RunRecord], list[str]]:
    """`records` graded again by `suite`'s current assertions; plus warnings.

    Runs that errored stay as they were (there is no response to grade); runs of a case
    or agent the suite no longer has are dropped with a warning. Comparison assertions
    (max-score, select-best) are decided again over each case and repeat's regraded runs.
    """
    from evals.grading import grade_case
    from evals.plan import build_plan
    from evals.runner import _transformed

    repeat = max((r.key.repeat for r in records), default=-1) + 1
    plan = {run.key.as_tuple(): run for run in build_plan(suite, repeat)}
    regraded: list[RunRecord] = []
    dropped = 0
    for record in records:
        run = plan.get(record.key.as_tuple())
        if run is None:
            dropped += 1
            continue
        if record.status == "error":
            regraded.append(record)
            continue
        run = dataclasses.replace(run, case=dataclasses.replace(run.case, vars=dict(record.vars)))
        output = _transformed(run, record.response.output, record.prompt, suite.root)
        grade = grade_case(
            run.case,
            record.response,
            output=output,
            prompt=record.prompt,
            latency_ms=record.latency_ms,
            suite_root=suite.root,
            agent=run.provider.label,
            provider_config=run.provider.config,
            suite_config=suite.raw,
        )
        regraded.append(
            dataclasses.replace(
                record,
                case_index=run.case.index,
                prompt_index=run.prompt_index,
                agent_index=run.agent_index,
                status="pass" if grade.passed else "fail",
                grade=grade,
            )
        )
    from evals.comparisons import compare_records

    warnings = [f"{dropped} stored run(s) match no case of the suite and were left out"]
    return compare_records(suite, regraded), warnings if dropped else []


def regrade(store_url: str | None, evaluation_id: str, suite_path: str | None = None) -> Any:
    """Grade a stored evaluation's responses again and store the result as a new evaluation.

    The suite is `suite_path`, else the file the evaluation ran. The new evaluation keeps
    the source's environment, commit and branch (the agents ran there) and names the
    source in `config.regraded_from`. Returns its `EvaluationResult`.
    """
    from evals.evaluation import analyse, new_meta
    from evals.model.evaluation import EvaluationResult
    from evals.model.options import RunOptions
    from evals.store import open_store
    from evals.suite import load_suite

    store = open_store(store_url)
    try:
        source = store.get_evaluation(evaluation_id)
        if source is None:
            raise SuiteError(
                f"the store has no evaluation {evaluation_id!r}", fix="see `evals history`"
            )
        path = suite_path or source.config.get("suite_path")
        if not path:
            raise SuiteError("cannot find the suite of the evaluation", fix="pass --suite PATH")
        suite = load_suite(path)
        records, warnings = regrade_records(suite, store.load_runs(evaluation_id))
        repeat = max((r.key.repeat for r in records), default=-1) + 1
        meta = new_meta(suite, RunOptions(environment=source.environment), repeat)
        meta.git_commit, meta.git_branch = source.git_commit, source.git_branch
        meta.agents = sorted({r.key.agent for r in records}, key=suite.agent_labels.index)
        meta.config = {**meta.config, "regraded_from": evaluation_id}
        store.create_evaluation(meta)
        store.add_runs(meta.id, records)
        gate_config = suite.gates.for_environment(source.environment)
        summary, gates = analyse(suite, records, gate_config, source.environment)
        gates.warnings.extend(warnings)
        meta.status = "complete"
        meta.ended_at = time.time()
        store.finish_evaluation(meta, summary, gates)
    finally:
        store.close()
    return EvaluationResult(suite, meta, records, summary, gates, gate_config, repeat)
