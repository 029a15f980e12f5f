"""Aggregate questions about stored runs, answered by the database (GROUP BY).

What the dashboard's pages ask: pass/fail/error counts, cost, tokens and latency per
evaluation and agent (overview, trends), per case and agent (comparisons), and which
assertions fail. Results are plain lists of dicts, ready for `pandas.DataFrame(rows)`.
The statistics on top of these counts (intervals, verdicts) belong to `evals.stats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import BigInteger, Double, Engine, Select, case, cast, func, select

from evals.store.schema import evaluations, grades, runs


def _count_where(condition: Any) -> Any:
    return cast(func.sum(case((condition, 1), else_=0)), BigInteger)


def _outcome_columns() -> list[Any]:
    return [
        func.count().label("runs"),
        _count_where(runs.c.status == "pass").label("passes"),
        _count_where(runs.c.status == "fail").label("fails"),
        _count_where(runs.c.status == "error").label("errors"),
    ]


class Aggregates:
    """Database-side aggregates over the runs of one or more evaluations."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _rows(self, query: Select[Any]) -> list[dict[str, Any]]:
        with self.engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]

    def agent_totals(self, evaluation_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Per evaluation and agent: run, pass, fail, error counts; cost, tokens, latency."""
        query = (
            select(
                runs.c.evaluation_id,
                runs.c.agent,
                *_outcome_columns(),
                func.coalesce(func.sum(runs.c.cost), 0.0).label("total_cost"),
                func.avg(runs.c.cost).label("mean_cost"),
                cast(func.sum(runs.c.total_tokens), BigInteger).label("total_tokens"),
                func.avg(runs.c.latency_ms).label("mean_latency_ms"),
                func.max(runs.c.latency_ms).label("max_latency_ms"),
            )
            .where(runs.c.evaluation_id.in_(list(evaluation_ids)))
            .group_by(runs.c.evaluation_id, runs.c.agent)
            .order_by(runs.c.evaluation_id, runs.c.agent)
        )
        return self._rows(query)

    def case_agent_counts(self, evaluation_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Per evaluation, case and agent: outcome counts, mean score, cost and latency."""
        query = (
            select(
                runs.c.evaluation_id,
                runs.c.case_id,
                func.min(runs.c.case_index).label("case_index"),
                runs.c.agent,
                *_outcome_columns(),
                func.avg(runs.c.score).label("mean_score"),
                func.avg(runs.c.cost).label("mean_cost"),
                func.avg(runs.c.latency_ms).label("mean_latency_ms"),
                cast(func.avg(runs.c.steps), Double).label("mean_steps"),
            )
            .where(runs.c.evaluation_id.in_(list(evaluation_ids)))
            .group_by(runs.c.evaluation_id, runs.c.case_id, runs.c.agent)
            .order_by(runs.c.evaluation_id, "case_index", runs.c.agent)
        )
        return self._rows(query)

    def trend(
        self,
        suite_id: str,
        environment: str | None = None,
        branch: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """The last `limit` complete evaluations of a suite, oldest first, one row per agent.

        Each row carries the evaluation's time, commit, branch and verdict with the agent's
        outcome counts, cost and latency: the data of a trend chart with interval bands.
        """
        chosen = (
            select(evaluations.c.id)
            .where(evaluations.c.suite_id == suite_id, evaluations.c.status == "complete")
            .order_by(evaluations.c.started_at.desc())
            .limit(limit)
        )
        if environment is not None:
            chosen = chosen.where(evaluations.c.environment == environment)
        if branch is not None:
            chosen = chosen.where(evaluations.c.git_branch == branch)
        totals = (
            select(
                runs.c.evaluation_id,
                runs.c.agent,
                *_outcome_columns(),
                func.coalesce(func.sum(runs.c.cost), 0.0).label("total_cost"),
                func.avg(runs.c.latency_ms).label("mean_latency_ms"),
            )
            .where(runs.c.evaluation_id.in_(chosen.scalar_subquery()))
            .group_by(runs.c.evaluation_id, runs.c.agent)
            .subquery()
        )
        query = (
            select(
                evaluations.c.id.label("evaluation_id"),
                evaluations.c.started_at,
                evaluations.c.git_commit,
                evaluations.c.git_branch,
                evaluations.c.environment,
                evaluations.c.suite_version,
                evaluations.c.verdict,
                *[c for c in totals.c if c.name != "evaluation_id"],
            )
            .join(totals, totals.c.evaluation_id == evaluations.c.id)
            .order_by(evaluations.c.started_at, evaluations.c.id, totals.c.agent)
        )
        return self._rows(query)

    def run_metrics(self, evaluation_id: str) -> list[dict[str, Any]]:
        """One light row per run (no JSON): for cost and latency distributions."""
        query = (
            select(
                runs.c.case_id,
                runs.c.agent,
                runs.c.repeat,
                runs.c.status,
                runs.c.error_kind,
                runs.c.score,
                runs.c.cost,
                runs.c.total_tokens,
                runs.c.latency_ms,
                runs.c.steps,
            )
            .where(runs.c.evaluation_id == evaluation_id)
            .order_by(runs.c.case_index, runs.c.agent_index, runs.c.repeat)
        )
        return self._rows(query)

    def assertion_failures(self, evaluation_id: str) -> list[dict[str, Any]]:
        """Per agent, assertion type and metric: how often it was checked, failed, errored."""
        query = (
            select(
                runs.c.agent,
                grades.c.type,
                grades.c.metric,
                func.count().label("checked"),
                _count_where(grades.c.passed.is_(False)).label("failed"),
                _count_where(grades.c.errored.is_(True)).label("errored"),
                _count_where(grades.c.policy_violation.is_(True)).label("policy_violations"),
            )
            .join(runs, runs.c.id == grades.c.run_id)
            .where(runs.c.evaluation_id == evaluation_id, grades.c.parent_idx.is_not(None))
            .group_by(runs.c.agent, grades.c.type, grades.c.metric)
            .order_by(runs.c.agent, grades.c.type, grades.c.metric)
        )
        return self._rows(query)
