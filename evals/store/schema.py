"""The tables of the results store, identical on SQLite and PostgreSQL.

This module describes the current schema (its number is `layout.SCHEMA_VERSION`);
`migrations` brings an older database up to it. Times are seconds since the epoch (double
precision) so records round-trip exactly; structured values are JSON.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from evals.store.jsontype import JsonDocument
from evals.store.layout import RUN_KEY_COLUMNS

metadata = MetaData()

Json = JsonDocument()
RowId = BigInteger().with_variant(Integer, "sqlite")

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("description", Text, nullable=False),
    Column("applied_at", Double, nullable=False),
)

evaluations = Table(
    "evaluations",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("suite_id", Text, nullable=False),
    Column("suite_version", Text),
    Column("fingerprint", Text, nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("git_commit", Text),
    Column("git_branch", Text),
    Column("environment", Text),
    Column("shard", Text),
    Column("started_at", Double, nullable=False),
    Column("ended_at", Double),
    Column("status", String(16), nullable=False),
    Column("config", Json),
    Column("agents", Json),
    Column("summary", Json),
    Column("gates", Json),
    Column("verdict", String(16)),
    Column("outline", Json),
    Column("agent_fingerprints", Json),
    Column("planned_runs", Integer),
    Column("stored_runs", Integer),
    Column("ci_event", Text),
    Index("ix_evaluations_suite_started", "suite_id", "started_at"),
    Index("ix_evaluations_resume", "suite_id", "fingerprint", "status", "started_at"),
    Index("ix_evaluations_env_branch", "environment", "git_branch", "started_at"),
)

runs = Table(
    "runs",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column(
        "evaluation_id",
        String(64),
        ForeignKey("evaluations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("prompt_id", Text, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("case_index", Integer, nullable=False),
    Column("prompt_index", Integer, nullable=False),
    Column("agent", Text, nullable=False),
    Column("agent_index", Integer, nullable=False),
    Column("repeat", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("prompt", Text, nullable=False),
    Column("vars", Json),
    Column("output", Json),
    Column("status", String(8), nullable=False),
    Column("error", Text),
    Column("error_kind", String(32)),
    Column("score", Double),
    Column("passed", Boolean),
    Column("input_tokens", BigInteger),
    Column("output_tokens", BigInteger),
    Column("total_tokens", BigInteger, nullable=False),
    Column("cost", Double),
    Column("latency_ms", Double, nullable=False),
    Column("steps", Integer, nullable=False),
    Column("stop_reason", Text),
    Column("trajectory", Json),
    Column("trace", Json),
    Column("extra", Json),
    Column("started_at", Double, nullable=False),
    Column("ended_at", Double, nullable=False),
    UniqueConstraint(*RUN_KEY_COLUMNS, name="uq_runs_key"),
    CheckConstraint("status IN ('pass', 'fail', 'error')", name="ck_runs_status"),
    # Covers the per-evaluation, per-agent counts and sums of the overview and trends.
    Index(
        "ix_runs_agent_status",
        "evaluation_id",
        "agent",
        "status",
        "cost",
        "latency_ms",
        "total_tokens",
    ),
)

grades = Table(
    "grades",
    metadata,
    Column("run_id", RowId, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("idx", Integer, primary_key=True, autoincrement=False),
    Column("parent_idx", Integer),
    Column("type", Text),
    Column("passed", Boolean, nullable=False),
    Column("score", Double, nullable=False),
    Column("reason", Text, nullable=False),
    Column("metric", Text),
    Column("weight", Double),
    Column("policy_violation", Boolean, nullable=False),
    Column("errored", Boolean, nullable=False),
)

gate_results = Table(
    "gate_results",
    metadata,
    Column(
        "evaluation_id",
        String(64),
        ForeignKey("evaluations.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("name", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("threshold", Double),
    Column("measured", Double),
    Column("interval_lo", Double),
    Column("interval_hi", Double),
    Column("reason", Text, nullable=False),
    Column("blocking", Boolean, nullable=False),
)

# Per evaluation, the rate of each agent over the suite, each tag and each case, copied
# from the stored summary so that histories across evaluations read rows, not documents.
group_rates = Table(
    "group_rates",
    metadata,
    Column(
        "evaluation_id",
        String(64),
        ForeignKey("evaluations.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("kind", String(8), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("agent", Text, primary_key=True),
    Column("runs", Integer, nullable=False),
    Column("errors", Integer, nullable=False),
    Column("pass_rate", Double),
    Column("interval_lo", Double),
    Column("interval_hi", Double),
    CheckConstraint("kind IN ('suite', 'tag', 'case')", name="ck_group_rates_kind"),
    Index("ix_group_rates_name", "kind", "name"),
)

# Per evaluation that compared two agents, candidate against baseline over the suite, each
# tag and each case, copied from the stored summary's comparison.
group_verdicts = Table(
    "group_verdicts",
    metadata,
    Column(
        "evaluation_id",
        String(64),
        ForeignKey("evaluations.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("kind", String(8), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("priority", Text),
    Column("verdict", String(24), nullable=False),
    Column("difference", Double),
    Column("interval_lo", Double),
    Column("interval_hi", Double),
    Column("level", Double),
    Column("p_value", Double),
    Column("q_value", Double),
    Column("baseline_rate", Double),
    Column("candidate_rate", Double),
    Column("reason", Text, nullable=False, default=""),
    CheckConstraint("kind IN ('suite', 'tag', 'case')", name="ck_group_verdicts_kind"),
    Index("ix_group_verdicts_name", "kind", "name", "verdict"),
)

TRIAGE_KINDS_SQL = (
    "kind IN ('acknowledge', 'quarantine', 'accept_disagreement', 'remove', 'override', "
    "'rate', 'comment')"
)

triage_actions = Table(
    "triage_actions",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column("kind", String(24), nullable=False),
    Column("suite_id", Text, nullable=False),
    Column("case_id", Text),
    Column("environment", Text),
    Column("evaluation_id", String(64)),
    Column("gate", Text),
    Column("until", Double),
    Column("reason", Text, nullable=False),
    Column("link", Text),
    Column("actor", Text, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("target_id", RowId, ForeignKey("triage_actions.id")),
    # An annotation's run: with case_id and evaluation_id, its agent, prompt and repeat.
    Column("agent", Text),
    Column("prompt_id", Text),
    Column("repeat", Integer),
    Column("label", String(16)),
    CheckConstraint(TRIAGE_KINDS_SQL, name="ck_triage_kind"),
    CheckConstraint(
        "kind <> 'quarantine' OR (until IS NOT NULL AND case_id IS NOT NULL)",
        name="ck_triage_quarantine",
    ),
    CheckConstraint("kind <> 'remove' OR target_id IS NOT NULL", name="ck_triage_remove"),
    Index("ix_triage_suite_kind", "suite_id", "kind", "until"),
    Index("ix_triage_created", "created_at"),
)
