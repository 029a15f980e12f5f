"""The store questions the dashboard asks, answered by the database.

Listings read only the columns a page shows (never the large summary document of every
evaluation), trend points pull just the per-agent part of each stored summary, and the
rows behind a comparison leave out outputs, trajectories and traces. Each page therefore
reads a bounded amount of data however many runs the store holds.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import regex as regex_module
from sqlalchemy import (
    BigInteger,
    Engine,
    Select,
    Text,
    and_,
    case,
    cast,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ColumnClause, ColumnElement

from evals.common.jsengine import DEFAULT_TIME_LIMIT_S
from evals.store.schema import (
    evaluations,
    gate_results,
    grades,
    group_rates,
    group_verdicts,
    runs,
)


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


class JsonMemberText(ColumnElement[str]):
    """`document[outer][key]` as text, for matching a metadata value typed in a search box.

    Strings come back bare, numbers as written, booleans as `true`/`false`; a missing key
    is NULL. The key travels as a bound parameter (it may not hold a double quote).
    """

    type = Text()
    inherit_cache = False

    def __init__(self, document: ColumnClause[Any], outer: str, member: str) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", outer):
            raise ValueError(f"not a plain JSON member name: {outer!r}")
        if '"' in member:
            raise ValueError(f"a metadata key cannot hold a double quote: {member!r}")
        self.document = document
        self.outer = outer
        self.member = member


@compiles(JsonMemberText)
def _json_member_text_sqlite(element: JsonMemberText, compiler: SQLCompiler, **kw: Any) -> str:
    document = compiler.process(element.document, **kw)
    path = compiler.process(literal(f'$.{element.outer}."{element.member}"'), **kw)
    return (
        f"CASE json_type({document}, {path}) WHEN 'true' THEN 'true' "
        f"WHEN 'false' THEN 'false' ELSE CAST(json_extract({document}, {path}) AS TEXT) END"
    )


@compiles(JsonMemberText, "postgresql")
def _json_member_text_postgresql(element: JsonMemberText, compiler: SQLCompiler, **kw: Any) -> str:
    document = compiler.process(element.document, **kw)
    key = compiler.process(literal(element.member), **kw)
    return f"(({document})::json -> '{element.outer}' ->> {key})"


def case_metadata_matches(metadata: dict[str, Any], key: str, value: str) -> bool:
    """Whether a case's metadata has `key` equal to `value` (or, for a list, holding it),
    values compared as text the way `JsonMemberText` renders them."""
    held = metadata.get(key)
    items = held if isinstance(held, list) else [held]
    return any(item is not None and _as_text(item) == value for item in items)


def _output_text(stored: str | None) -> str | None:
    """A stored output (JSON text) as a reader wants it: a string output as its text, any
    other value as its JSON."""
    if stored is None or not stored.startswith('"'):
        return stored
    try:
        value = json.loads(stored)
    except ValueError:
        return stored
    return value if isinstance(value, str) else stored


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


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


def _environment_is(environment: str | None) -> ColumnElement[bool]:
    """Evaluations run in `environment`; None selects those run without one."""
    if environment is None:
        return evaluations.c.environment.is_(None)
    return evaluations.c.environment == environment


def _verdict() -> Any:
    return JsonMember(evaluations.c.gates, "verdict").label("verdict")


SEARCH_TIME_LIMIT_S = DEFAULT_TIME_LIMIT_S
"""Longest a regular-expression search of runs may take, the same limit as one check's
regular expression: a pattern that backtracks without end stops there."""


class SearchError(ValueError):
    """A search the store will not run: an invalid pattern, or one past its time limit."""


def _limited_regexp(pattern: str, deadline: float, state: dict[str, bool]) -> Callable[..., Any]:
    """SQLite's `regexp(pattern, value)` for one search: Python's syntax (as SQLAlchemy's
    own), matched by the `regex` module, which releases the GIL while it matches and
    stops at the search's deadline."""
    compiled = regex_module.compile(pattern)

    def regexp(_: str, value: Any) -> bool | None:
        if value is None:
            return None
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            return compiled.search(str(value), timeout=remaining, concurrent=True) is not None
        except TimeoutError:
            state["timed_out"] = True
            raise

    return regexp


def _timed_out_error() -> SearchError:
    return SearchError(
        f"the regular expression took longer than {SEARCH_TIME_LIMIT_S:g} s over these runs "
        "and was stopped: simplify it (nested repetition such as (a+)+ backtracks) or narrow "
        "the search with the other filters"
    )


class DashboardQueries:
    """Read-only queries over an engine opened by `evals.store.open_store`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _rows(self, query: Select[Any]) -> list[dict[str, Any]]:
        with self.engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]

    def _searched(self, queries: list[Select[Any]], pattern: str) -> list[list[dict[str, Any]]]:
        """The rows of `queries`, which match runs by the regular expression `pattern`,
        all within SEARCH_TIME_LIMIT_S: SearchError past it, or for an invalid pattern."""
        deadline = time.monotonic() + SEARCH_TIME_LIMIT_S
        state = {"timed_out": False}
        with self.engine.connect() as connection:
            try:
                self._limit_regexp(connection, pattern, deadline, state)
                return [[dict(row._mapping) for row in connection.execute(q)] for q in queries]
            except DBAPIError as exc:
                if state["timed_out"] or "statement timeout" in str(exc.orig):
                    raise _timed_out_error() from None
                raise SearchError(f"the search failed: {exc.orig}") from None

    def _limit_regexp(
        self, connection: Connection, pattern: str, deadline: float, state: dict[str, bool]
    ) -> None:
        """Bound the connection's regular expressions by `deadline`: SQLite's `regexp`
        function replaced for this search, PostgreSQL's statement timeout set for it."""
        if connection.dialect.name == "sqlite":
            try:
                function = _limited_regexp(pattern, deadline, state)
            except regex_module.error as exc:
                raise SearchError(f"invalid regular expression: {exc}") from None
            raw = connection.connection.driver_connection
            raw.create_function("regexp", 2, function)  # type: ignore[union-attr]
        elif connection.dialect.name == "postgresql":
            connection.begin()
            milliseconds = int(SEARCH_TIME_LIMIT_S * 1000)
            connection.exec_driver_sql(f"SET LOCAL statement_timeout = {milliseconds}")

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
        """The last `limit` complete evaluations of a suite in one environment (None: those
        run without one), oldest first.

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
        query = query.where(_environment_is(environment)).order_by(
            evaluations.c.started_at.desc(), evaluations.c.id.desc()
        )
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

    def _window(
        self, suite_id: str, environment: str | None, fingerprint: str | None, until: float | None
    ) -> Select[Any]:
        """Complete, unsharded evaluations of a suite in one environment (None: runs without
        one), of one fingerprint when given, started no later than `until`."""
        query = select(
            evaluations.c.id,
            evaluations.c.started_at,
            evaluations.c.git_commit,
            evaluations.c.git_branch,
            evaluations.c.fingerprint,
        ).where(
            evaluations.c.suite_id == suite_id,
            _environment_is(environment),
            evaluations.c.status == "complete",
            evaluations.c.shard.is_(None),
        )
        if fingerprint is not None:
            query = query.where(evaluations.c.fingerprint == fingerprint)
        if until is not None:
            query = query.where(evaluations.c.started_at <= until)
        return query

    def environments(self, suite_id: str) -> list[dict[str, Any]]:
        """The suite's environments (None for runs without one), each with its newest complete,
        unsharded evaluation's id, start, verdict and evaluation count; newest first."""
        newest_first = func.row_number().over(
            partition_by=evaluations.c.environment,
            order_by=(evaluations.c.started_at.desc(), evaluations.c.id.desc()),
        )
        counted = func.count().over(partition_by=evaluations.c.environment)
        ranked = (
            select(
                evaluations.c.environment,
                evaluations.c.id,
                evaluations.c.started_at,
                _verdict(),
                counted.label("evaluations"),
                newest_first.label("rank"),
            )
            .where(
                evaluations.c.suite_id == suite_id,
                evaluations.c.status == "complete",
                evaluations.c.shard.is_(None),
            )
            .subquery()
        )
        query = (
            select(*[c for c in ranked.c if c.name != "rank"])
            .where(ranked.c.rank == 1)
            .order_by(ranked.c.started_at.desc())
        )
        return self._rows(query)

    def history(
        self,
        suite_id: str,
        environment: str | None,
        until: float,
        names: list[str],
        limit: int = 200,
    ) -> dict[str, Any]:
        """The stored verdicts of some cases and tags over past evaluations, newest first,
        across suite versions and edits.

        `evaluations`: the last `limit` complete evaluations of the suite in the
        environment started no later than `until`, with their suite fingerprints;
        `verdicts`: their `group_verdicts` rows (kind, name, verdict, difference) for the
        named groups; `gates`: their failed gates (evaluation, name, status, reason);
        `case_fingerprints`: per suite fingerprint among them, the named cases' case
        fingerprints, and `tag_members`: per suite fingerprint, the cases of each named tag
        (both from one stored outline of each suite fingerprint).
        """
        window = (
            self._window(suite_id, environment, None, until)
            .order_by(evaluations.c.started_at.desc(), evaluations.c.id.desc())
            .limit(limit)
        )
        listed = self._rows(window)
        empty: dict[str, Any] = {
            "evaluations": listed,
            "verdicts": [],
            "gates": [],
            "case_fingerprints": {},
            "tag_members": {},
        }
        if not listed or not names:
            return empty
        ids = [row["id"] for row in listed]
        query = select(
            group_verdicts.c.evaluation_id,
            group_verdicts.c.kind,
            group_verdicts.c.name,
            group_verdicts.c.verdict,
            group_verdicts.c.difference,
        ).where(group_verdicts.c.evaluation_id.in_(ids), group_verdicts.c.name.in_(names))
        failed = select(
            gate_results.c.evaluation_id,
            gate_results.c.name,
            gate_results.c.status,
            gate_results.c.reason,
        ).where(gate_results.c.evaluation_id.in_(ids), gate_results.c.status == "fail")
        representatives: dict[str, str] = {}
        for row in listed:
            representatives.setdefault(row["fingerprint"], row["id"])
        return {
            **empty,
            "verdicts": self._rows(query),
            "gates": self._rows(failed),
            "case_fingerprints": self.case_fingerprints(representatives, set(names)),
            "tag_members": self.tag_members(representatives, set(names)),
        }

    def _outline_cases(self, representatives: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
        """Per suite fingerprint, the cases of the outline stored with its representative
        evaluation (`representatives`: suite fingerprint → evaluation id)."""
        query = select(evaluations.c.id, evaluations.c.outline).where(
            evaluations.c.id.in_(list(representatives.values()))
        )
        by_id = {row["id"]: row["outline"] or {} for row in self._rows(query)}
        return {
            suite_fingerprint: [
                case
                for case in (by_id.get(evaluation_id) or {}).get("cases", [])
                if isinstance(case, dict) and case.get("id") is not None
            ]
            for suite_fingerprint, evaluation_id in representatives.items()
        }

    def case_fingerprints(
        self, representatives: dict[str, str], names: set[str]
    ) -> dict[str, dict[str, str]]:
        """Per suite fingerprint, the case fingerprints of the named cases, read from the
        outline stored with its representative evaluation (`representatives`: suite
        fingerprint → evaluation id)."""
        return {
            suite_fingerprint: {
                str(case["id"]): str(case["fingerprint"])
                for case in cases
                if case["id"] in names and case.get("fingerprint")
            }
            for suite_fingerprint, cases in self._outline_cases(representatives).items()
        }

    def tag_members(
        self, representatives: dict[str, str], names: set[str]
    ) -> dict[str, dict[str, list[str]]]:
        """Per suite fingerprint, the ids of the cases carrying each named tag (in suite
        order), read from the outline stored with its representative evaluation; a suite
        fingerprint whose outline lists no case (none stored) is left out."""
        found: dict[str, dict[str, list[str]]] = {}
        for suite_fingerprint, cases in self._outline_cases(representatives).items():
            if not cases:
                continue
            members: dict[str, list[str]] = {}
            for outlined in cases:
                tags = outlined.get("tags")
                for tag in tags if isinstance(tags, list) else []:
                    if tag in names:
                        members.setdefault(str(tag), []).append(str(outlined["id"]))
            found[suite_fingerprint] = members
        return found

    def group_trend(
        self, suite_id: str, environment: str | None, kind: str, name: str, limit: int = 60
    ) -> list[dict[str, Any]]:
        """One group's rates per agent over the last `limit` evaluations, oldest first.

        Each row: the evaluation's id, start, commit, branch and verdict, the agent's rate
        with its interval and runs and errors, and the comparison's verdict, difference and
        interval for the group when the evaluation compared two agents.
        """
        window = (
            self._window(suite_id, environment, None, None)
            .order_by(evaluations.c.started_at.desc(), evaluations.c.id.desc())
            .limit(limit)
            .subquery()
        )
        chosen = (
            select(
                window.c.id,
                window.c.started_at,
                window.c.git_commit,
                window.c.git_branch,
                window.c.fingerprint,
                evaluations.c.verdict.label("gate_verdict"),
            )
            .join(evaluations, evaluations.c.id == window.c.id)
            .subquery()
        )
        query = (
            select(
                chosen.c.id.label("evaluation"),
                chosen.c.started_at,
                chosen.c.git_commit,
                chosen.c.git_branch,
                chosen.c.fingerprint.label("suite_fingerprint"),
                chosen.c.gate_verdict,
                group_rates.c.agent,
                group_rates.c.pass_rate,
                group_rates.c.interval_lo,
                group_rates.c.interval_hi,
                group_rates.c.runs,
                group_rates.c.errors,
                group_verdicts.c.verdict,
                group_verdicts.c.difference,
                group_verdicts.c.interval_lo.label("difference_lo"),
                group_verdicts.c.interval_hi.label("difference_hi"),
                group_verdicts.c.q_value,
            )
            .join(group_rates, group_rates.c.evaluation_id == chosen.c.id)
            .outerjoin(
                group_verdicts,
                and_(
                    group_verdicts.c.evaluation_id == chosen.c.id,
                    group_verdicts.c.kind == kind,
                    group_verdicts.c.name == name,
                ),
            )
            .where(group_rates.c.kind == kind, group_rates.c.name == name)
            .order_by(chosen.c.started_at, chosen.c.id, group_rates.c.agent)
        )
        return self._rows(query)

    def previous_evaluation(
        self, suite_id: str, environment: str | None, started_at: float, evaluation_id: str
    ) -> dict[str, Any] | None:
        """The complete evaluation of the suite in the environment just before another."""
        query = (
            self._window(suite_id, environment, None, started_at)
            .where(evaluations.c.id != evaluation_id)
            .order_by(evaluations.c.started_at.desc(), evaluations.c.id.desc())
            .limit(1)
        )
        rows = self._rows(query)
        return rows[0] if rows else None

    def case_rates(self, evaluation_id: str) -> list[dict[str, Any]]:
        """Per case and agent of an evaluation: runs, errors and pass rate (from its summary)."""
        query = (
            select(
                group_rates.c.name.label("case_id"),
                group_rates.c.agent,
                group_rates.c.runs,
                group_rates.c.errors,
                group_rates.c.pass_rate,
            )
            .where(group_rates.c.evaluation_id == evaluation_id, group_rates.c.kind == "case")
            .order_by(group_rates.c.name, group_rates.c.agent)
        )
        return self._rows(query)

    def group_names(self, evaluation_id: str) -> dict[str, list[str]]:
        """The tags and cases an evaluation has rates for."""
        query = (
            select(group_rates.c.kind, group_rates.c.name)
            .where(group_rates.c.evaluation_id == evaluation_id, group_rates.c.kind != "suite")
            .distinct()
            .order_by(group_rates.c.kind, group_rates.c.name)
        )
        names: dict[str, list[str]] = {"tag": [], "case": []}
        for row in self._rows(query):
            names[row["kind"]].append(row["name"])
        return names

    def failing_assertions(self, evaluation_id: str, agent: str) -> list[dict[str, Any]]:
        """Per case of an agent: each assertion type (and metric) that failed, in how many
        of the case's runs it failed (a run failing two assertions of one type counts
        once), and the reason of its first failure."""
        metric = func.coalesce(grades.c.metric, "")
        failed = (
            select(
                runs.c.case_id,
                grades.c.run_id,
                grades.c.type,
                grades.c.metric,
                metric.label("metric_key"),
                grades.c.reason,
                func.row_number()
                .over(
                    partition_by=(runs.c.case_id, grades.c.type, metric),
                    order_by=(runs.c.repeat, runs.c.prompt_index, grades.c.idx),
                )
                .label("nth"),
            )
            .join(runs, runs.c.id == grades.c.run_id)
            .where(
                runs.c.evaluation_id == evaluation_id,
                runs.c.agent == agent,
                grades.c.parent_idx.is_not(None),
                grades.c.type.is_not(None),
                grades.c.passed.is_(False),
            )
            .subquery()
        )
        counted = (
            select(
                failed.c.case_id,
                failed.c.type,
                failed.c.metric_key,
                func.count(failed.c.run_id.distinct()).label("failures"),
            )
            .group_by(failed.c.case_id, failed.c.type, failed.c.metric_key)
            .subquery()
        )
        query = (
            select(
                failed.c.case_id,
                failed.c.type,
                failed.c.metric,
                failed.c.reason,
                counted.c.failures,
            )
            .join(
                counted,
                and_(
                    counted.c.case_id == failed.c.case_id,
                    counted.c.type == failed.c.type,
                    counted.c.metric_key == failed.c.metric_key,
                ),
            )
            .where(failed.c.nth == 1)
            .order_by(failed.c.case_id, counted.c.failures.desc(), failed.c.type)
        )
        return self._rows(query)

    def case_outcomes(self, evaluation_id: str, case_id: str) -> list[dict[str, Any]]:
        """Every run of one case (all agents, prompts and repeats): its outcome, error kind and
        its first failed assertion's type and reason, without outputs or trajectories."""
        first_failure = (
            select(
                grades.c.run_id,
                grades.c.type,
                grades.c.reason,
                func.row_number()
                .over(partition_by=grades.c.run_id, order_by=grades.c.idx)
                .label("nth"),
            )
            .join(runs, runs.c.id == grades.c.run_id)
            .where(
                runs.c.evaluation_id == evaluation_id,
                runs.c.case_id == case_id,
                grades.c.parent_idx.is_not(None),
                grades.c.passed.is_(False),
            )
            .subquery()
        )
        query = (
            select(
                runs.c.agent,
                runs.c.prompt_id,
                runs.c.repeat,
                runs.c.status,
                runs.c.error_kind,
                runs.c.latency_ms,
                first_failure.c.type.label("failed_type"),
                first_failure.c.reason.label("failed_reason"),
            )
            .outerjoin(
                first_failure,
                and_(first_failure.c.run_id == runs.c.id, first_failure.c.nth == 1),
            )
            .where(runs.c.evaluation_id == evaluation_id, runs.c.case_id == case_id)
            .order_by(runs.c.agent_index, runs.c.prompt_index, runs.c.repeat)
        )
        return self._rows(query)

    def case_outputs(
        self, evaluation_id: str, agent: str, case_ids: list[str]
    ) -> list[dict[str, Any]]:
        """Every run of one agent on the given cases: its prompt, repeat, status, error and
        output as text (a string output as its text), in plan order."""
        query = (
            select(
                runs.c.case_id,
                runs.c.prompt_id,
                runs.c.repeat,
                runs.c.status,
                runs.c.error,
                cast(runs.c.output, Text).label("output"),
            )
            .where(
                runs.c.evaluation_id == evaluation_id,
                runs.c.agent == agent,
                runs.c.case_id.in_(case_ids),
            )
            .order_by(runs.c.case_index, runs.c.prompt_index, runs.c.repeat)
        )
        rows = self._rows(query)
        for row in rows:
            row["output"] = _output_text(row["output"])
        return rows

    def search_runs(
        self,
        evaluation_id: str,
        *,
        text: str = "",
        regex: bool = False,
        statuses: list[str] | None = None,
        agents: list[str] | None = None,
        case_ids: list[str] | None = None,
        metadata: list[tuple[str, str]] | None = None,
        limit: int | None = 200,
        offset: int = 0,
        across: list[str] | None = None,
    ) -> dict[str, Any]:
        """Runs of an evaluation whose output, error, prompt or vars contain `text` (a
        case-insensitive substring, or a regular expression with `regex`), filtered by
        status, agent, case and `metadata`; one page of `limit` rows from `offset` (every
        matching row for None), and the total. With `across`, the runs of all those
        evaluations instead (a suite's history), newest first; case metadata is then read
        from `evaluation_id`'s outline. A regular-expression search stops after
        SEARCH_TIME_LIMIT_S with a SearchError, which an invalid pattern raises too.

        Each `(key, value)` of `metadata` must hold: the run's metadata (what the agent
        reported with its response, or what the harness recorded of the run) or its
        case's metadata in the suite has `key` equal to `value`, compared as text (a list,
        such as a case's tags, holds `value`).

        Rows carry the run's identity, its rendered prompt, outcome, cost, latency and its
        output as text.
        """
        output_text = cast(runs.c.output, Text)
        conditions: list[Any] = [
            runs.c.evaluation_id.in_(across)
            if across is not None
            else runs.c.evaluation_id == evaluation_id
        ]
        if text:
            searched = [output_text, runs.c.error, runs.c.prompt, cast(runs.c.vars, Text)]
            if regex:
                conditions.append(or_(*[c.regexp_match(text) for c in searched]))
            else:
                pattern = (
                    "%"
                    + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                    + "%"
                )
                conditions.append(
                    or_(*[func.lower(c).like(pattern, escape="\\") for c in searched])
                )
        if statuses:
            conditions.append(runs.c.status.in_(statuses))
        if agents:
            conditions.append(runs.c.agent.in_(agents))
        if case_ids is not None:
            conditions.append(runs.c.case_id.in_(case_ids))
        if metadata:
            conditions.extend(self._metadata_conditions(evaluation_id, metadata))
        counted = select(func.count().label("n")).select_from(runs).where(*conditions)
        order = (
            (runs.c.started_at.desc(), runs.c.id.desc())
            if across is not None
            else (runs.c.case_index, runs.c.agent_index, runs.c.prompt_index, runs.c.repeat)
        )
        query = (
            select(
                runs.c.evaluation_id,
                runs.c.case_id,
                runs.c.agent,
                runs.c.prompt_id,
                runs.c.prompt,
                runs.c.repeat,
                runs.c.status,
                runs.c.error_kind,
                runs.c.score,
                runs.c.cost,
                runs.c.latency_ms,
                output_text.label("output"),
                runs.c.error,
            )
            .where(*conditions)
            .order_by(*order)
            .limit(limit)
            .offset(offset)
        )
        if text and regex:
            total, rows = self._searched([counted, query], text)
        else:
            total, rows = self._rows(counted), self._rows(query)
        for row in rows:
            row["output"] = _output_text(row["output"])
        return {"total": total[0]["n"], "rows": rows}

    def _metadata_conditions(
        self, evaluation_id: str, metadata: list[tuple[str, str]]
    ) -> list[ColumnElement[bool]]:
        """One condition per `(key, value)`: run metadata in SQL, case metadata from the
        outline stored with the evaluation."""
        outline = self._rows(select(evaluations.c.outline).where(evaluations.c.id == evaluation_id))
        stored = (outline[0]["outline"] if outline else None) or {}
        cases = [case for case in stored.get("cases", []) if isinstance(case, dict)]
        conditions: list[ColumnElement[bool]] = []
        for key, value in metadata:
            matching = [str(c["id"]) for c in cases if case_metadata_matches(c, key, value)]
            conditions.append(
                or_(
                    JsonMemberText(runs.c.extra, "metadata", key) == value,
                    JsonMemberText(runs.c.extra, "run_metadata", key) == value,
                    runs.c.case_id.in_(matching),
                )
            )
        return conditions
