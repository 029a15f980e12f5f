"""Evaluations over time: listing the store, and comparing two stored evaluations.

A pull request's candidate is usually compared with the latest nightly of main. The
runs of the chosen agent in each evaluation are relabelled `baseline` and `candidate`
and analysed with the same statistics and gates as a live evaluation.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from evals.gates.decide import check_comparable
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.results import RunKey, RunRecord
from evals.model.suite import Suite, SuiteOutline
from evals.pipeline.evaluation import analyse
from evals.suite import load_suite

if TYPE_CHECKING:
    from evals.store import Store


def print_history(
    store_url: str | None, suite_id: str | None, environment: str | None, limit: int
) -> None:
    """Print stored evaluations, newest first, one line each, with their gate verdict."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from evals.store import open_store

    store = open_store(store_url)
    try:
        metas = store.list_evaluations(suite_id=suite_id, environment=environment, limit=limit)
    finally:
        store.close()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("id", "suite", "version", "env", "branch", "commit", "started (UTC)"):
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=28)
    table.add_column("verdict", no_wrap=True)
    colours = {"pass": "green", "fail": "red", "undetermined": "yellow"}
    for meta in metas:
        verdict = meta.verdict or "" if meta.status == "complete" else meta.status
        started = datetime.fromtimestamp(meta.started_at, UTC).strftime("%Y-%m-%d %H:%M")
        table.add_row(
            meta.id,
            meta.suite_id,
            meta.suite_version or "",
            meta.environment or "",
            meta.git_branch or "",
            (meta.git_commit or "")[:8],
            started,
            f"[{colours.get(verdict, 'default')}]{verdict}[/]",
        )
    console = Console()
    if not console.is_terminal:  # logs and pipes: never truncate ids
        console = Console(width=160)
    console.print(table)


def _pick_agent(
    meta: EvaluationMeta, records: list[RunRecord], wanted: str | None, default: str | None
) -> str:
    agents = sorted({r.key.agent for r in records})
    for choice in (wanted, default):
        if choice and choice in agents:
            return choice
    if wanted:
        raise SuiteError(
            f"evaluation {meta.id} has no agent {wanted!r}",
            fix=f"choose one of {', '.join(agents)}",
        )
    if len(agents) == 1:
        return agents[0]
    raise SuiteError(
        f"evaluation {meta.id} ran several agents ({', '.join(agents)})",
        fix="choose one with --baseline-agent / --candidate-agent",
    )


def _relabel(records: list[RunRecord], agent: str, label: str) -> list[RunRecord]:
    out = []
    for record in records:
        if record.key.agent != agent:
            continue
        key = RunKey(record.key.prompt_id, record.key.case_id, label, record.key.repeat)
        out.append(dataclasses.replace(record, key=key))
    return out


def _suite_for(meta: EvaluationMeta, suite_path: str | None) -> Suite:
    """The suite file given or the one the evaluation ran; for an evaluation without a
    suite file (`pytest --evals`), the suite its stored outline describes."""
    path = suite_path or meta.config.get("suite_path")
    if not path and meta.outline is not None:
        return SuiteOutline.from_dict(meta.outline).to_suite(meta.description)
    if not path:
        raise SuiteError("cannot find the suite of the stored evaluation", fix="pass --suite PATH")
    return load_suite(path)


def compare_stored(
    store_url: str | None,
    *,
    baseline_id: str | None,
    candidate_id: str | None,
    suite: str | None = None,
    baseline_agent: str | None = None,
    candidate_agent: str | None = None,
    environment: str | None = None,
    allow_fingerprint_mismatch: bool = False,
) -> EvaluationResult:
    """Analyse a stored candidate evaluation against a stored baseline evaluation.

    Defaults: the candidate is the latest evaluation (of `suite` when given) and the
    baseline the latest nightly on main with the same fingerprint. Different fingerprints
    are refused unless explicitly allowed, and then reported as a warning.
    """
    from evals.store import open_store

    store = open_store(store_url)
    try:
        suite_filter = None
        if suite and not suite.endswith((".yaml", ".yml")) and "/" not in suite:
            suite_filter = suite
        candidate_meta = _resolve_candidate(store, candidate_id, suite_filter)
        baseline_meta = _resolve_baseline(store, baseline_id, candidate_meta)
        suite_obj = _suite_for(candidate_meta, suite if suite_filter is None else None)
        warnings = check_comparable(
            baseline_meta.fingerprint,
            candidate_meta.fingerprint,
            allow_fingerprint_mismatch or suite_obj.gates.allow_fingerprint_mismatch,
        )
        gate_config = suite_obj.gates.for_environment(environment)
        default_agent = gate_config.candidate
        base_runs = store.load_runs(baseline_meta.id)
        cand_runs = store.load_runs(candidate_meta.id)
    finally:
        store.close()
    base_agent = _pick_agent(baseline_meta, base_runs, baseline_agent, default_agent)
    cand_agent = _pick_agent(candidate_meta, cand_runs, candidate_agent, default_agent)
    records = _relabel(base_runs, base_agent, "baseline") + _relabel(
        cand_runs, cand_agent, "candidate"
    )
    config = dataclasses.replace(gate_config, baseline="baseline", candidate="candidate")
    summary, gates = analyse(suite_obj, records, config, environment)
    gates.warnings.extend(warnings)
    if summary.comparison is not None:
        summary.comparison.warnings.extend(warnings)
    meta = dataclasses.replace(
        candidate_meta,
        id=f"{baseline_meta.id}..{candidate_meta.id}",
        agents=["baseline", "candidate"],
        config={
            **candidate_meta.config,
            "baseline_evaluation": baseline_meta.id,
            "candidate_evaluation": candidate_meta.id,
            "compared_at": time.time(),
        },
    )
    repeat = max((r.key.repeat for r in records), default=0) + 1
    return EvaluationResult(suite_obj, meta, records, summary, gates, config, repeat)


def _stored(store: Store, evaluation_id: str) -> EvaluationMeta:
    meta = store.get_evaluation(evaluation_id)
    if meta is None:
        raise SuiteError(
            f"the store has no evaluation {evaluation_id!r}",
            fix="list the stored evaluations with `evals history`",
        )
    return meta


def _resolve_candidate(
    store: Store, candidate_id: str | None, suite_id: str | None
) -> EvaluationMeta:
    if candidate_id:
        return _stored(store, candidate_id)
    metas = store.list_evaluations(suite_id=suite_id, limit=1)
    if not metas:
        raise SuiteError(
            "the store holds no evaluation to compare", fix="run `evals run SUITE` first"
        )
    return _stored(store, metas[0].id)  # with its outline, which listings leave out


LATEST_NIGHTLY = "latest"


def _resolve_baseline(
    store: Store, baseline_id: str | None, candidate: EvaluationMeta
) -> EvaluationMeta:
    """The named baseline, else the newest nightly on main that started before the candidate.

    `latest` names the default explicitly, so CI can name the candidate alone; a nightly
    candidate is thereby compared with the night before, never with itself.
    """
    if baseline_id and baseline_id != LATEST_NIGHTLY:
        return _stored(store, baseline_id)
    nightlies = store.list_evaluations(
        suite_id=candidate.suite_id,
        environment="nightly",
        branch="main",
        fingerprint=candidate.fingerprint,
        status="complete",
        limit=None,
    )
    meta = next(
        (
            e
            for e in nightlies
            if e.shard is None and e.id != candidate.id and e.started_at <= candidate.started_at
        ),
        None,
    )
    if meta is None:
        raise SuiteError(
            f"no nightly evaluation on main for suite {candidate.suite_id!r} to compare against",
            fix="pass the baseline evaluation id (see `evals history`)",
        )
    return meta
