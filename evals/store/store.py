"""The results store: evaluations, their runs and grades, and gate decisions.

The only place in the harness with SQL. One class over SQLAlchemy Core serves SQLite
(the default, a file under `.evals/`) and PostgreSQL (shared by CI and the dashboard).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Row, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from evals.model.evaluation import RUN_ORDERS, EvaluationMeta, RunOrder
from evals.model.results import RunRecord
from evals.model.suite import Case, SuiteOutline
from evals.model.summary import GateReport, Summary
from evals.model.triage import TriageAction
from evals.store.aggregates import Aggregates
from evals.store.baselines import (
    DECISION,
    BaselineStatus,
    acceptances,
    baseline_status,
    is_baseline_eligible,
)
from evals.store.codec import EncodedRun, decode_run
from evals.store.engine import check_read_only, create_store_engine, create_viewer_engine
from evals.store.groups import write_group_rows
from evals.store.layout import (
    META_COLUMNS,
    duplicate_evaluation,
    evaluation_values,
    finished_values,
    gate_rows,
)
from evals.store.location import resolve_url
from evals.store.migrations import ensure_schema
from evals.store.schema import evaluations, gate_results, grades, runs
from evals.store.triage import TriageLog
from evals.store.writer import insert_encoded, insert_runs


@dataclass(slots=True)
class StoredEvaluation(EvaluationMeta):
    """An evaluation as read back: its metadata plus the stored summary and gate report."""

    summary: dict[str, Any] | None = None
    gates: dict[str, Any] | None = None
    verdict: str | None = None

    def suite_outline(self) -> SuiteOutline:
        """The suite outline stored with the evaluation (read by `Store.get_evaluation`).

        An evaluation stored before outlines were has its cases' descriptions, tags and
        priorities recovered from its stored summary, and no gate thresholds.
        """
        if self.outline is not None:
            return SuiteOutline.from_dict(self.outline)
        summary = self.summary or {}
        compared = {c["case_id"]: c for c in (summary.get("comparison") or {}).get("cases") or []}
        case_ids = dict.fromkeys(s["case_id"] for s in summary.get("case_stats") or [])
        cases = []
        for index, case_id in enumerate(case_ids):
            known = compared.get(case_id, {})
            metadata = {k: known[k] for k in ("tags", "priority", "why_it_exists") if known.get(k)}
            description = known.get("description") or case_id
            cases.append(Case(index, case_id, description, {}, [], metadata=metadata))
        return SuiteOutline(self.suite_id, self.suite_version, self.fingerprint, self.agents, cases)


# Statuses of an evaluation that did not end and may be resumed.
RESUMABLE = ("running", "interrupted")

# Listings leave out the suite outline, which only analysing an evaluation again reads.
_LISTED_COLUMNS = [column for column in evaluations.c if column.name != "outline"]


def _stored(row: Row[Any]) -> StoredEvaluation:
    data = row._mapping
    return StoredEvaluation(
        **{name: data[name] for name in META_COLUMNS},
        agents=data["agents"] or [],
        config=data["config"] or {},
        summary=data["summary"],
        gates=data["gates"],
        verdict=data["verdict"],
        outline=data.get("outline"),
        agent_fingerprints=data["agent_fingerprints"] or {},
    )


class Store:
    """Reads and writes evaluations; open one with `open_store`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.aggregates = Aggregates(engine)
        self.triage = TriageLog(engine)

    @property
    def dialect(self) -> str:
        """`sqlite` or `postgresql`."""
        return self.engine.dialect.name

    def create_evaluation(self, meta: EvaluationMeta) -> None:
        """Record a new evaluation (status usually `running`).

        An id the store already holds (given twice, or by two runs at once: the unique key
        decides) is a SuiteError naming --evaluation-id, never a database error.
        """
        try:
            with self.engine.begin() as connection:
                connection.execute(insert(evaluations).values(**evaluation_values(meta)))
        except IntegrityError:
            if self.get_evaluation(meta.id) is None:
                raise
            raise duplicate_evaluation(meta.id) from None

    def get_evaluation(self, evaluation_id: str) -> StoredEvaluation | None:
        """One evaluation by id, or None when the store has no such evaluation."""
        with self.engine.connect() as connection:
            row = connection.execute(
                select(evaluations).where(evaluations.c.id == evaluation_id)
            ).first()
        return _stored(row) if row is not None else None

    def find_resumable(
        self,
        suite_id: str,
        fingerprint: str,
        evaluation_id: str | None = None,
        agent_fingerprints: dict[str, str] | None = None,
    ) -> StoredEvaluation | None:
        """The evaluation to resume: the one named, or the latest unfinished one.

        Without an id, only an evaluation of the same suite and fingerprint (same cases,
        same assertions) with status `running` or `interrupted`, whose agents have the given agent
        fingerprints, qualifies. A named evaluation of another suite, fingerprint or
        agent code is refused, since its runs would not be the runs of this plan.
        """
        if evaluation_id is not None:
            found = self.get_evaluation(evaluation_id)
            if found is not None and (found.suite_id, found.fingerprint) != (
                suite_id,
                fingerprint,
            ):
                raise ValueError(
                    f"evaluation {evaluation_id} ran suite {found.suite_id} with fingerprint "
                    f"{found.fingerprint}; it cannot be resumed with {suite_id} {fingerprint}"
                )
            changed = found and _changed_agents(found.agent_fingerprints, agent_fingerprints)
            if changed:
                raise ValueError(
                    f"evaluation {evaluation_id} ran other code of agent(s) "
                    f"{', '.join(changed)}; it cannot be resumed with the agents as they are now"
                )
            return found
        found_all = self.list_evaluations(suite_id=suite_id, fingerprint=fingerprint, limit=None)
        return next(
            (
                e
                for e in found_all
                if e.status in RESUMABLE
                and not _changed_agents(e.agent_fingerprints, agent_fingerprints)
            ),
            None,
        )

    def mark_interrupted(self, meta: EvaluationMeta) -> None:
        """Record that evaluation `meta` stopped on a signal before its end: status
        `interrupted` (resumable like a `running` one) and the time it stopped."""
        with self.engine.begin() as connection:
            connection.execute(
                update(evaluations)
                .where(evaluations.c.id == meta.id)
                .where(evaluations.c.status.in_(RESUMABLE))
                .values(status="interrupted", ended_at=meta.ended_at)
            )

    def list_evaluations(
        self,
        suite_id: str | None = None,
        environment: str | None = None,
        branch: str | None = None,
        fingerprint: str | None = None,
        limit: int | None = 50,
        status: str | None = None,
    ) -> list[StoredEvaluation]:
        """Evaluations matching every given filter, newest first."""
        query = select(*_LISTED_COLUMNS)
        filters = {
            evaluations.c.suite_id: suite_id,
            evaluations.c.environment: environment,
            evaluations.c.git_branch: branch,
            evaluations.c.fingerprint: fingerprint,
            evaluations.c.status: status,
        }
        for column, value in filters.items():
            if value is not None:
                query = query.where(column == value)
        query = query.order_by(evaluations.c.started_at.desc(), evaluations.c.id.desc())
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as connection:
            return [_stored(row) for row in connection.execute(query)]

    def baselines(
        self,
        suite_id: str,
        *,
        environment: str | None = "nightly",
        branch: str | None = "main",
        fingerprint: str | None = None,
        chosen: bool = True,
    ) -> list[StoredEvaluation]:
        """The evaluations that are baselines (`evals.store.baselines`), newest first: the
        first is *the* baseline.

        By default the nightlies on main; pass None for `environment` or `branch` to
        accept any, and a suite fingerprint to require the very same cases and assertions.
        Never chosen: running and incomplete evaluations, shards (a part of a plan),
        evaluations started by a pull request, and regraded ones (their responses came
        from another evaluation). With `chosen` False, every evaluation that could be
        one, chosen or not (a nightly that regressed is still main's agent's runs).
        """
        found = self.list_evaluations(
            suite_id=suite_id,
            environment=environment,
            branch=branch,
            fingerprint=fingerprint,
            status="complete",
            limit=None,
        )
        eligible = [e for e in found if is_baseline_eligible(e)]
        if not chosen:
            return eligible
        statuses = self.baseline_statuses(eligible)
        return [e for e in eligible if statuses[e.id].chosen]

    def baseline_statuses(self, metas: Sequence[StoredEvaluation]) -> dict[str, BaselineStatus]:
        """Whether each evaluation is a baseline and why, by id (the triage log's
        acceptances read once)."""
        suites = {meta.suite_id for meta in metas}
        accepted: dict[str, TriageAction] = {}
        now = time.time()
        for suite_id in sorted(suites):
            accepted.update(acceptances(self.triage.current(suite_id, now=now)))
        return {meta.id: baseline_status(meta, meta.gates, accepted.get(meta.id)) for meta in metas}

    def record_baseline_decision(self, evaluation_id: str, chosen: bool, reason: str) -> None:
        """Record whether the nightly that stored the evaluation chose it as the baseline,
        and why (in its config, beside how it ran)."""
        meta = self.get_evaluation(evaluation_id)
        if meta is None:
            raise KeyError(evaluation_id)
        config = {**meta.config, DECISION: {"chosen": chosen, "reason": reason}}
        with self.engine.begin() as connection:
            connection.execute(
                update(evaluations).where(evaluations.c.id == evaluation_id).values(config=config)
            )

    def completed_keys(self, evaluation_id: str) -> set[tuple[str, str, str, int]]:
        """`RunKey.as_tuple()` of every stored run of the evaluation."""
        return set(self.iter_keys(evaluation_id))

    def iter_keys(self, evaluation_id: str) -> Iterator[tuple[str, str, str, int]]:
        """`RunKey.as_tuple()` of every stored run of the evaluation, read a batch at a
        time."""
        query = select(runs.c.prompt_id, runs.c.case_id, runs.c.agent, runs.c.repeat).where(
            runs.c.evaluation_id == evaluation_id
        )
        with self.engine.connect() as connection:
            for row in connection.execution_options(yield_per=5000).execute(query):
                yield row[0], row[1], row[2], row[3]

    def load_runs(
        self,
        evaluation_id: str,
        case_id: str | None = None,
        agent: str | None = None,
        repeat: int | None = None,
    ) -> list[RunRecord]:
        """The stored records of an evaluation (optionally one case, agent and/or repeat), in
        plan order."""
        conditions = [runs.c.evaluation_id == evaluation_id]
        if case_id is not None:
            conditions.append(runs.c.case_id == case_id)
        if agent is not None:
            conditions.append(runs.c.agent == agent)
        if repeat is not None:
            conditions.append(runs.c.repeat == repeat)
        grade_query = (
            select(grades)
            .join(runs, runs.c.id == grades.c.run_id)
            .where(*conditions)
            .order_by(grades.c.run_id, grades.c.idx)
        )
        run_query = (
            select(runs)
            .where(*conditions)
            .order_by(runs.c.case_index, runs.c.prompt_index, runs.c.agent_index, runs.c.repeat)
        )
        with self.engine.connect() as connection:
            run_rows = connection.execute(run_query).all()
            trees = {
                run_id: list(rows)
                for run_id, rows in itertools.groupby(
                    connection.execute(grade_query), key=lambda row: row.run_id
                )
            }
        return [decode_run(row, trees.get(row.id, [])) for row in run_rows]

    def iter_runs(
        self, evaluation_id: str, order: RunOrder = "plan", batch: int = 500
    ) -> Iterator[RunRecord]:
        """`load_runs` of a whole evaluation in `order` (`RUN_ORDERS`), a batch of runs at a
        time, so a reader of a million runs holds one batch, not every run."""
        run_query = (
            select(runs)
            .where(runs.c.evaluation_id == evaluation_id)
            .order_by(*(runs.c[name] for name in RUN_ORDERS[order]))
        )
        with self.engine.connect() as connection, self.engine.connect() as side:
            result = connection.execution_options(yield_per=batch).execute(run_query)
            for rows in result.partitions():
                grade_query = (
                    select(grades)
                    .where(grades.c.run_id.in_([row.id for row in rows]))
                    .order_by(grades.c.run_id, grades.c.idx)
                )
                trees = {
                    run_id: list(found)
                    for run_id, found in itertools.groupby(
                        side.execute(grade_query), key=lambda row: row.run_id
                    )
                }
                for row in rows:
                    yield decode_run(row, trees.get(row.id, []))

    def add_runs(self, evaluation_id: str, records: list[RunRecord]) -> int:
        """Store records now, in one transaction; returns how many were not stored before."""
        return insert_runs(self.engine, evaluation_id, records)

    def add_encoded(self, encoded_runs: list[EncodedRun]) -> int:
        """`add_runs` for runs already encoded by `encode_run` (what the store process
        receives)."""
        return insert_encoded(self.engine, encoded_runs)

    def quarantines(self, suite_id: str, now: float) -> list[TriageAction]:
        """The suite's quarantines in force at `now` (see `TriageLog.quarantines`)."""
        return self.triage.quarantines(suite_id, now=now)

    def finish_evaluation(self, meta: EvaluationMeta, summary: Summary, gates: GateReport) -> None:
        """Record the end of an evaluation: status, end time, statistics and gate decisions,
        with the summary's rates and verdicts per suite, tag and case as rows."""
        document = summary.to_dict()
        with self.engine.begin() as connection:
            connection.execute(
                update(evaluations)
                .where(evaluations.c.id == meta.id)
                .values(**finished_values(meta, document, gates))
            )
            connection.execute(delete(gate_results).where(gate_results.c.evaluation_id == meta.id))
            rows = gate_rows(meta.id, gates)
            if rows:
                connection.execute(insert(gate_results), rows)
            write_group_rows(connection, meta.id, document)

    def gate_results(self, evaluation_id: str) -> list[dict[str, Any]]:
        """The gate rows of an evaluation, in the order they were decided."""
        query = (
            select(gate_results)
            .where(gate_results.c.evaluation_id == evaluation_id)
            .order_by(gate_results.c.position)
        )
        with self.engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]

    def prune(self, keep: int) -> list[str]:
        """Delete all but the `keep` newest evaluations of each suite; returns the ids deleted.

        The baseline of each (suite, branch) (`baselines`) is kept even when it is older,
        so pull requests and the next nightly always find it. An evaluation still `running`
        is never deleted nor counted (its runs are still arriving; one killed with `kill -9`
        stays until it is resumed), even if it starts running while this prunes. A SQLite
        file is compacted afterwards (VACUUM), so a store carried from job to job stays
        bounded.
        """
        if keep < 1:
            raise ValueError("keep at least one evaluation")
        everything = [m for m in self.list_evaluations(limit=None) if m.status != "running"]
        statuses = self.baseline_statuses(everything)
        kept: set[str] = set()
        per_suite: dict[str, int] = {}
        baselines: set[tuple[str, str | None]] = set()
        for meta in everything:
            per_suite[meta.suite_id] = per_suite.get(meta.suite_id, 0) + 1
            if per_suite[meta.suite_id] <= keep:
                kept.add(meta.id)
            line = (meta.suite_id, meta.git_branch)
            nightly = meta.environment == "nightly" and statuses[meta.id].chosen
            if nightly and line not in baselines:
                baselines.add(line)
                kept.add(meta.id)
        doomed = [meta.id for meta in everything if meta.id not in kept]
        resumed: set[str] = set()  # running again since they were listed: left alone
        with self.engine.begin() as connection:
            for start in range(0, len(doomed), 500):
                chunk = doomed[start : start + 500]
                connection.execute(
                    delete(evaluations).where(
                        evaluations.c.id.in_(chunk), evaluations.c.status != "running"
                    )
                )
                left = select(evaluations.c.id).where(evaluations.c.id.in_(chunk))
                resumed.update(connection.execute(left).scalars())
        doomed = [i for i in doomed if i not in resumed]
        if doomed and self.dialect == "sqlite":
            raw = self.engine.raw_connection()  # autocommit: VACUUM runs outside a transaction
            try:
                raw.cursor().execute("VACUUM")
            finally:
                raw.close()
        return doomed

    def delete_evaluation(self, evaluation_id: str) -> None:
        """Delete one evaluation with its runs, grades and gate rows (a merge replacing
        what an earlier attempt of the same job stored)."""
        with self.engine.begin() as connection:
            connection.execute(delete(evaluations).where(evaluations.c.id == evaluation_id))

    def close(self) -> None:
        """Release the store's connections."""
        self.engine.dispose()


def _changed_agents(stored: dict[str, str], current: dict[str, str] | None) -> list[str]:
    """Labels whose stored agent fingerprint differs from the current one."""
    if not current:
        return []
    return sorted(label for label, fp in stored.items() if current.get(label, fp) != fp)


def open_store(url: str | None = None, *, read_only: bool = False) -> Store:
    """Open (creating or upgrading as needed) the store at `url`.

    None means $EVALS_STORE_URL, else the SQLite file `.evals/results.db` under the cwd.
    `read_only` opens a PostgreSQL store in read-only transactions and never upgrades
    its schema (a SQLite file is the caller's own copy and is opened as usual).
    """
    resolved = resolve_url(url)
    engine = create_store_engine(resolved, read_only=read_only)
    try:
        ensure_schema(engine, upgrade=not read_only or engine.dialect.name == "sqlite")
    except BaseException:
        engine.dispose()
        raise
    return Store(engine)


def open_viewer_store(url: str | None = None) -> Store:
    """Open the store at `url` for viewing only: every write fails in the database.

    Never creates or upgrades the schema (a store of another version is a HarnessFault
    saying who can upgrade it), and checks on a live connection that it cannot write.
    """
    engine = create_viewer_engine(resolve_url(url))
    try:
        ensure_schema(engine, upgrade=False)
        check_read_only(engine)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine)
