"""The store questions the dashboard asks, answered by the database.

Listings read only the columns a page shows (never the large summary document of every
evaluation), trend points pull just the per-agent part of each stored summary, and the
rows behind a comparison leave out outputs, trajectories and traces. Each page therefore
reads a bounded amount of data however many runs the store holds.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sqlalchemy import BigInteger, Engine, Select, Text, and_, case, cast, func, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ColumnClause, ColumnElement

from evals.store.schema import evaluations, grades, runs


class JsonMember(ColumnElement[str]):
    """A top-level member of a stored JSON document, as text, on SQLite and PostgreSQL.

    Strings come back bare; objects and arrays as JSON text. Works whatever SQLAlchemy
    type the column is declared with, since the document is addressed in SQL directly.
    """

    type = Text()
    inherit_cache = False

    def __init__(self, document: ColumnClause[Any], key: str) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ValueError(f"not a plain JSON member name: {key!r}")
        self.document = document
        self.key = key


@compiles(JsonMember)
def _json_member_sqlite(element: JsonMember, compiler: SQLCompiler, **kw: Any) -> str:
    return f"json_extract({compiler.process(element.document, **kw)}, '$.{element.key}')"


@compiles(JsonMember, "postgresql")
def _json_member_postgresql(element: JsonMember, compiler: SQLCompiler, **kw: Any) -> str:
    document = compiler.process(element.document, **kw)
    return (
        f"CASE WHEN json_typeof(({document})::json -> '{element.key}') = 'string' "
        f"THEN ({document})::json ->> '{element.key}' "
        f"ELSE (({document})::json -> '{element.key}')::text END"
    )


_LISTED_COLUMNS = (
    evaluations.c.id,
    evaluations.c.suite_id,
    evaluations.c.suite_version,
    evaluations.c.fingerprint,
    evaluations.c.environment,
    evaluations.c.git_branch,
    evaluations.c.git_commit,
    evaluations.c.started_at,
    evaluations.c.ended_at,
    evaluations.c.status,
    evaluations.c.shard,
    evaluations.c.agents,
)


def _verdict() -> Any:
    return JsonMember(evaluations.c.gates, "verdict").label("verdict")


class DashboardQueries:
    """Read-only queries over an engine opened by `evals.store.open_store`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _rows(self, query: Select[Any]) -> list[dict[str, Any]]:
        with self.engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]

    def suites(self) -> list[dict[str, Any]]:
        """Every suite in the store: how many evaluations it has and when it last ran."""
        query = (
            select(
                evaluations.c.suite_id,
                func.count().label("evaluations"),
                func.max(evaluations.c.started_at).label("last_started_at"),
            )
            .group_by(evaluations.c.suite_id)
            .order_by(evaluations.c.suite_id)
        )
        return self._rows(query)

    def latest_verdicts(self) -> list[dict[str, Any]]:
        """Per suite and environment, the newest complete, unsharded evaluation and its verdict.

        Evaluations run without an environment appear under environment None.
        """
        newest_first = func.row_number().over(
            partition_by=(evaluations.c.suite_id, evaluations.c.environment),
            order_by=(evaluations.c.started_at.desc(), evaluations.c.id.desc()),
        )
        ranked = (
            select(
                evaluations.c.id,
                evaluations.c.suite_id,
                evaluations.c.environment,
                evaluations.c.git_branch,
                evaluations.c.git_commit,
                evaluations.c.started_at,
                _verdict(),
                newest_first.label("rank"),
            )
            .where(evaluations.c.status == "complete", evaluations.c.shard.is_(None))
            .subquery()
        )
        query = (
            select(*[c for c in ranked.c if c.name != "rank"])
            .where(ranked.c.rank == 1)
            .order_by(ranked.c.suite_id, ranked.c.environment)
        )
        return self._rows(query)

    def evaluations(
        self, suite_id: str, *, complete_only: bool = False, limit: int = 200
    ) -> list[dict[str, Any]]:
        """The suite's evaluations, newest first, with their verdict but not their documents."""
        query = select(*_LISTED_COLUMNS, _verdict()).where(evaluations.c.suite_id == suite_id)
        if complete_only:
            query = query.where(evaluations.c.status == "complete")
        query = query.order_by(evaluations.c.started_at.desc(), evaluations.c.id.desc())
        return self._rows(query.limit(limit))

    def trend(
        self, suite_id: str, environment: str | None = None, limit: int = 60
    ) -> list[dict[str, Any]]:
        """The last `limit` complete evaluations of a suite, oldest first.

        Each row carries the evaluation's provenance, its verdict and `agents`: the list of
        per-agent statistics (`AgentStats` as stored by the run that produced them).
        """
        query = select(
            evaluations.c.id,
            evaluations.c.started_at,
            evaluations.c.environment,
            evaluations.c.git_branch,
            evaluations.c.git_commit,
            _verdict(),
            JsonMember(evaluations.c.summary, "agents").label("agents"),
        ).where(
            evaluations.c.suite_id == suite_id,
            evaluations.c.status == "complete",
            evaluations.c.shard.is_(None),
        )
        if environment is not None:
            query = query.where(evaluations.c.environment == environment)
        query = query.order_by(evaluations.c.started_at.desc(), evaluations.c.id.desc())
        rows = self._rows(query.limit(limit))
        for row in rows:
            row["agents"] = json.loads(row["agents"]) if row["agents"] else []
        return list(reversed(rows))

    def outcome_rows(
        self, evaluation_id: str, agent: str, reported_latency: bool = False
    ) -> list[dict[str, Any]]:
        """One row per run of an agent: what the statistics read, and nothing else.

        Identity and plan positions, seed, status, error kind and message, score, cost,
        latency (the harness's wall time; with `reported_latency`, also the latency the
        agent reported, `agent_latency_ms`), and whether the run's grade marked a policy
        violation (the root node of its grade tree).
        """
        root = grades.alias("root_grade")
        reported = (
            (
                JsonMember(runs.c.extra, "agent_latency_ms").label("agent_latency_ms"),
                JsonMember(runs.c.extra, "latency_ms").label("older_latency_ms"),
            )
            if reported_latency
            else ()
        )
        query = (
            select(
                *reported,
                runs.c.prompt_id,
                runs.c.case_id,
                runs.c.repeat,
                runs.c.case_index,
                runs.c.prompt_index,
                runs.c.agent_index,
                runs.c.seed,
                runs.c.status,
                runs.c.error_kind,
                runs.c.error,
                runs.c.score,
                runs.c.passed,
                runs.c.cost,
                runs.c.latency_ms,
                root.c.policy_violation,
            )
            .outerjoin(root, and_(root.c.run_id == runs.c.id, root.c.idx == 0))
            .where(runs.c.evaluation_id == evaluation_id, runs.c.agent == agent)
            .order_by(runs.c.case_index, runs.c.prompt_index, runs.c.repeat)
        )
        rows = self._rows(query)
        for row in rows:
            if reported_latency:
                value = row.pop("older_latency_ms")
                value = row["agent_latency_ms"] if row["agent_latency_ms"] is not None else value
                row["agent_latency_ms"] = None if value is None else float(value)
        return rows

    def case_assertion_types(self, evaluation_id: str) -> list[dict[str, Any]]:
        """Per case and assertion type: how often it was checked and how often it failed."""
        query = (
            select(
                runs.c.case_id,
                grades.c.type,
                func.count().label("checked"),
                cast(func.sum(case((grades.c.passed.is_(False), 1), else_=0)), BigInteger).label(
                    "failed"
                ),
            )
            .join(runs, runs.c.id == grades.c.run_id)
            .where(
                runs.c.evaluation_id == evaluation_id,
                grades.c.parent_idx.is_not(None),
                grades.c.type.is_not(None),
            )
            .group_by(runs.c.case_id, grades.c.type)
            .order_by(runs.c.case_id, grades.c.type)
        )
        return self._rows(query)
