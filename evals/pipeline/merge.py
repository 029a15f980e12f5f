"""Combining the shards of one evaluation into the evaluation an unsharded run gives.

`evals run --shard i/n --evaluation-id ID` runs every n-th planned run; seeds derive from
(suite, case, agent, repeat), so the union of the shards is run for run what a single
process would have run. Shards arrive as results stores (each shard's SQLite file) or as
the `.json` reports they wrote. Merging keeps one record per run key, re-indexes every
record against the suite's plan, recomputes statistics and gates over the union, and
stores the result as one unsharded evaluation.

Inputs that are not shards of one evaluation are refused, naming the input: an
unsharded evaluation, shards of different evaluations, suites, agent code, shard counts
or plans. When shards are missing (a shard job failed), the shards at hand are merged
and the evaluation is stored as `incomplete`, with its planned and stored run counts: it
is reported, but never chosen as a baseline.

A shard given more than once (a CI job re-run: the shards of the first attempt and the
re-run shard of the second, all of one evaluation id) is merged from its newest attempt
(the one that started last), and the notes say so; merging into a store that holds the
evaluation an earlier attempt merged replaces it.
"""

from __future__ import annotations

import dataclasses
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Suite
from evals.model.trajectory import Step
from evals.pipeline.evaluation import analyse
from evals.plan.runs import build_plan


@dataclasses.dataclass(slots=True)
class Shard:
    """One shard's evaluation metadata and records, and the input they came from."""

    meta: EvaluationMeta
    records: list[RunRecord]
    source: str = ""


def _epoch(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def record_from_row(row: dict[str, Any]) -> RunRecord:
    """The run a promptfoo-format result row was written from (indices are set later)."""
    details = row["metadata"]["evals"]
    raw = row.get("response") or {}
    response = AgentResponse(
        output=raw.get("output"),
        error=raw.get("error"),
        token_usage=dict(raw.get("tokenUsage") or {}),
        cost=raw.get("cost"),
        metadata=dict(raw.get("metadata") or {}),
        trajectory=[Step.from_dict(step) for step in details.get("trajectory") or []],
        stop_reason=details.get("stopReason"),
        finish_reason=raw.get("finishReason"),
        latency_ms=None if raw.get("latencyMs") is None else float(raw["latencyMs"]),
        cached=bool(raw.get("cached")),
        log_probs=raw.get("logProbs"),
    )
    status = details["status"]
    grading = row.get("gradingResult")
    return RunRecord(
        key=RunKey(details["promptId"], details["caseId"], details["agent"], details["repeat"]),
        case_index=0,
        prompt_index=0,
        agent_index=0,
        seed=details["seed"],
        prompt=row["prompt"]["raw"],
        vars=row.get("vars") or {},
        response=response,
        status=status,
        grade=Grade.from_dict(grading) if grading else None,
        error=row.get("error") if status == "error" else None,
        error_kind=details.get("errorKind"),
        latency_ms=float(details.get("wallLatencyMs", row.get("latencyMs")) or 0.0),
        started_at=details.get("startedAt") or 0.0,
        ended_at=details.get("endedAt") or 0.0,
        metadata={"cost_unknown": details["costUnknown"]} if "costUnknown" in details else {},
    )


def read_json_shard(path: Path) -> Shard:
    """A shard from the promptfoo-format `.json` report `evals run -o` wrote; anything
    else (unreadable, not JSON, another report) is a SuiteError naming the file."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _not_a_report(path, str(exc)) from None
    section = document.get("evals") if isinstance(document, dict) else None
    if not isinstance(section, dict):
        raise _not_a_report(path, "it has no evals section")
    try:
        return _json_shard(path, document, section)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise _not_a_report(path, f"its evals section lacks or garbles {exc}") from None


def _not_a_report(path: Path, why: str) -> SuiteError:
    return SuiteError(
        f"{path} is not a report written by `evals run -o FILE.json` ({why})",
        fix="merge the .json reports (or stores) that `evals run --shard I/N` wrote",
    )


def _json_shard(path: Path, document: dict[str, Any], section: dict[str, Any]) -> Shard:
    suite = section["suite"]
    meta = EvaluationMeta(
        id=section["evaluationId"],
        suite_id=suite["id"],
        suite_version=suite.get("version"),
        fingerprint=suite["fingerprint"],
        description=suite.get("description") or "",
        environment=section.get("environment"),
        git_commit=section["git"].get("commit"),
        git_branch=section["git"].get("branch"),
        started_at=_epoch(section.get("startedAt")) or 0.0,
        ended_at=_epoch(section.get("endedAt")),
        agents=list(section.get("agents") or []),
        config={
            "repeat": section.get("repeat"),
            "suite_path": suite.get("path"),
            **(section.get("selection") or {}),
        },
        status=section.get("status") or "complete",
        shard=section.get("shard"),
        agent_fingerprints=dict(section.get("agentFingerprints") or {}),
    )
    records = [record_from_row(row) for row in document["results"]["results"]]
    return Shard(meta, records, str(path))


def _not_a_shard(source: str, meta: EvaluationMeta) -> SuiteError:
    return SuiteError(
        f"{source} holds evaluation {meta.id}, which ran unsharded: there is nothing to merge",
        fix="merge the stores (or .json reports) of `evals run --shard I/N` runs",
    )


def read_store_shard(url: str, evaluation_id: str | None) -> list[Shard]:
    """The shard evaluations a store holds (the one named, or every sharded one).

    A store that holds no shard of the evaluation is refused, naming what it holds.
    """
    from evals.store import open_store
    from evals.store.location import resolve_url, sqlite_file

    database = sqlite_file(resolve_url(url, option="SHARD"))
    if database is not None and not database.is_file():
        raise SuiteError(f"shard store {url} does not exist", fix="check the shard paths")
    store = open_store(url, read_only=True)
    try:
        if evaluation_id is not None:
            metas = [m for m in [store.get_evaluation(evaluation_id)] if m is not None]
        else:
            metas = store.list_evaluations(limit=None)
        shards = [m for m in metas if m.shard is not None]
        if not shards and metas:
            raise _not_a_shard(url, metas[0])
        return [Shard(meta, store.load_runs(meta.id), url) for meta in shards]
    finally:
        store.close()


def read_shards(sources: list[str], evaluation_id: str | None = None) -> list[Shard]:
    """Shards from `.json` reports and results stores (SQLite paths or store URLs)."""
    shards: list[Shard] = []
    for source in sources:
        if "://" not in source and not Path(source).is_file():
            raise SuiteError(f"{source} does not exist", fix="check the shard paths")
        if source.endswith(".json") and "://" not in source:
            shard = read_json_shard(Path(source))
            if shard.meta.shard is None:
                raise _not_a_shard(source, shard.meta)
            if evaluation_id is None or shard.meta.id == evaluation_id:
                shards.append(shard)
        else:
            shards.extend(read_store_shard(source, evaluation_id))
    if not shards:
        raise SuiteError(
            "no shard evaluation found in the given files"
            + (f" for evaluation {evaluation_id}" if evaluation_id else ""),
            fix="check the paths and the evaluation id",
        )
    return shards


def _shard_count(meta: EvaluationMeta) -> int:
    return int(str(meta.shard).split("/")[1])


# What every shard of one evaluation has in common, and how to say it.
_IDENTITY: tuple[tuple[str, Any], ...] = (
    ("evaluation id", lambda m: m.id),
    ("suite", lambda m: m.suite_id),
    ("suite fingerprint", lambda m: m.fingerprint),
    ("shard count", _shard_count),
    ("agent fingerprints", lambda m: sorted(m.agent_fingerprints.items())),
    ("repeats", lambda m: m.config.get("repeat")),
    ("seed", lambda m: m.config.get("seed") or 0),
    ("tags", lambda m: m.config.get("tags")),
    ("cases", lambda m: m.config.get("cases")),
)


def check_shards(shards: list[Shard]) -> None:
    """Refuse shards that are not parts of one evaluation, naming the inputs that differ."""
    for what, value in _IDENTITY:
        values = [value(s.meta) for s in shards]
        if any(v != values[0] for v in values):
            listed = "; ".join(
                f"{s.source or s.meta.id}: shard {s.meta.shard} has {v}"
                for s, v in zip(shards, values, strict=True)
            )
            raise SuiteError(
                f"the shards differ in {what}, so they are not parts of one evaluation: {listed}",
                fix="merge the shards of one `evals run --shard I/N --evaluation-id ID` "
                "(same suite, agents and options), or pass --evaluation-id",
            )


def _shard_index(meta: EvaluationMeta) -> int:
    return int(str(meta.shard).split("/")[0])


def newest_attempts(shards: list[Shard]) -> tuple[list[Shard], list[str]]:
    """One input per shard, the newest attempt of each (the one that started last), and
    a note for every shard given more than once."""
    by_index: dict[int, list[Shard]] = {}
    for shard in shards:
        by_index.setdefault(_shard_index(shard.meta), []).append(shard)
    kept: list[Shard] = []
    notes: list[str] = []
    for index in sorted(by_index):
        attempts = sorted(by_index[index], key=lambda s: (s.meta.started_at, s.source))
        newest = attempts[-1]
        kept.append(newest)
        if len(attempts) > 1:
            others = ", ".join(s.source or s.meta.id for s in attempts[:-1])
            notes.append(
                f"shard {newest.meta.shard}: {len(attempts)} attempts, the newest merged "
                f"({newest.source or newest.meta.id}, {len(newest.records)} runs); "
                f"left out: {others}"
            )
    return kept, notes


def missing_shards(shards: list[Shard]) -> list[str]:
    """The shards (`i/n`) of the evaluation that no input holds."""
    count = _shard_count(shards[0].meta)
    present = {int(str(s.meta.shard).split("/")[0]) for s in shards}
    return [f"{i}/{count}" for i in range(1, count + 1) if i not in present]


def merged_meta(shards: list[Shard]) -> EvaluationMeta:
    """The metadata of the evaluation the shards make up together."""
    first = shards[0].meta
    ended = [s.meta.ended_at for s in shards]
    agents = list(dict.fromkeys(a for s in shards for a in s.meta.agents))
    return dataclasses.replace(
        first,
        started_at=min(s.meta.started_at for s in shards),
        ended_at=None if None in ended else max(e for e in ended if e is not None),
        agents=agents,
        config={
            **first.config,
            "merged_shards": sorted({str(s.meta.shard) for s in shards}),
        },
        status="complete",
        shard=None,
    )


def merge_records(suite: Suite, shards: list[Shard], repeat: int) -> list[RunRecord]:
    """One record per run key, indexed by the suite's plan and in plan order."""
    plan = {run.key.as_tuple(): run for run in build_plan(suite, repeat)}
    by_key: dict[tuple[str, str, str, int], RunRecord] = {}
    for shard in shards:
        for record in shard.records:
            by_key.setdefault(record.key.as_tuple(), record)
    unknown = [key for key in by_key if key not in plan]
    if unknown:
        raise SuiteError(
            f"{len(unknown)} run(s) of the shards are not in the suite's plan, e.g. {unknown[0]}",
            fix="merge with the suite the shards ran (--suite PATH)",
        )
    order = {key: position for position, key in enumerate(plan)}
    merged = []
    for key in sorted(by_key, key=order.__getitem__):
        run = plan[key]
        merged.append(
            dataclasses.replace(
                by_key[key],
                case_index=run.case.index,
                prompt_index=run.prompt_index,
                agent_index=run.agent_index,
            )
        )
    return merged


def merge_shards(
    sources: list[str],
    *,
    suite_path: str | None = None,
    evaluation_id: str | None = None,
    environment: str | None = None,
) -> EvaluationResult:
    """The evaluation the shards in `sources` make up, analysed and gated (not stored).

    With shards missing, the evaluation is `incomplete` and a warning says which shards
    and how many planned runs are missing. `environment` replaces the shards' own.
    """
    from evals.suite import load_suite

    shards, attempts = newest_attempts(read_shards(sources, evaluation_id))
    check_shards(shards)
    meta = merged_meta(shards)
    meta.environment = environment or meta.environment
    path = suite_path or meta.config.get("suite_path")
    if not path:
        raise SuiteError("cannot find the suite the shards ran", fix="pass --suite PATH")
    suite = load_suite(path)
    meta.outline = suite.outline().to_dict()
    repeat = int(meta.config.get("repeat") or 1)
    records = merge_records(suite, shards, repeat)
    gate_config = suite.gates.for_environment(meta.environment)
    summary, gates = analyse(suite, records, gate_config, meta.environment)
    planned = build_plan(
        suite,
        repeat,
        tags=meta.config.get("tags"),
        case_ids=meta.config.get("cases"),
        agents=meta.agents or None,
    )
    meta.planned_runs = sum(1 for _ in planned)
    meta.stored_runs = len(records)
    gates.warnings += attempts
    if attempts:
        meta.config["shard_attempts"] = attempts
    missing = missing_shards(shards)
    if missing or meta.stored_runs < meta.planned_runs:
        meta.status = "incomplete"
        which = f"shard(s) {', '.join(missing)} missing: " if missing else ""
        gates.warnings.append(
            f"incomplete evaluation: {which}{meta.stored_runs} of {meta.planned_runs} planned "
            "runs merged; it is stored as incomplete and never chosen as a baseline"
        )
    meta.ended_at = meta.ended_at or time.time()
    return EvaluationResult(suite, meta, records, summary, gates, gate_config, repeat)


def store_merged(result: EvaluationResult, store_url: str | None) -> str | None:
    """Write the merged evaluation to a store. An evaluation of the same id that an
    earlier attempt merged there is replaced (a sentence says so, returned); a shard of
    it is refused (the store is one of the inputs)."""
    from evals.store import open_store

    store = open_store(store_url)
    try:
        existing = store.get_evaluation(result.meta.id)
        if existing is not None and existing.shard is not None:
            raise SuiteError(
                f"the store holds shard {existing.shard} of evaluation {result.meta.id}",
                fix="merge into another store (a new file, or the team's store)",
            )
        replaced = None
        if existing is not None:
            store.delete_evaluation(existing.id)
            replaced = (
                f"replaced evaluation `{existing.id}` as an earlier attempt merged it "
                f"({existing.status}, {existing.stored_runs} of {existing.planned_runs} runs)"
            )
        store.create_evaluation(result.meta)
        store.add_runs(result.meta.id, result.records)
        store.finish_evaluation(result.meta, result.summary, result.gates)
        return replaced
    finally:
        store.close()
