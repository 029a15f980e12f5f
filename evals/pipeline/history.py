"""Evaluations over time: listing the store, and comparing two evaluations.

A candidate is usually compared with the baseline of main (the newest nightly that is a
baseline, `evals.store.baselines`). The runs of the chosen agent in each evaluation are
relabelled `baseline` and `candidate` and analysed with the same statistics and gates as
a live evaluation. The agents may differ (their agent
fingerprints are reported); the suites must not, unless the comparison is asked to keep
to the cases both suites share.
"""

from __future__ import annotations

import dataclasses
import heapq
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from evals.analysis.cells import Tally, TallyRules
from evals.analysis.comparability import agent_change, suite_differences
from evals.model.errors import SuiteError
from evals.model.evaluation import (
    EvaluationMeta,
    EvaluationResult,
    RunOrder,
    RunSource,
    run_order_key,
)
from evals.model.gates import GateConfig
from evals.model.results import RunKey, RunRecord
from evals.model.suite import ProviderSpec, Suite, SuiteOutline
from evals.model.summary import BaselineReuse
from evals.model.triage import TriageAction
from evals.pipeline.evaluation import analyse
from evals.store.stored_runs import StoredRuns
from evals.suite import load_suite

if TYPE_CHECKING:
    from evals.store import Store, StoredEvaluation


def baseline_column(store: Store, metas: Sequence[StoredEvaluation]) -> dict[str, str]:
    """What `evals history` says of each nightly: `★ baseline` for the baseline of its
    suite and branch, else whether it is one and why (`evals.store.baselines`)."""
    statuses = store.baseline_statuses([m for m in metas if m.environment == "nightly"])
    current = {
        found[0].id
        for suite, branch in {(m.suite_id, m.git_branch) for m in metas if m.id in statuses}
        for found in [store.baselines(suite, branch=branch)]
        if found
    }
    shown = {}
    for evaluation_id, status in statuses.items():
        mark = "★ baseline: " if evaluation_id in current else "" if status.chosen else "not: "
        shown[evaluation_id] = mark + status.reason
    return shown


def print_history(
    store_url: str | None, suite_id: str | None, environment: str | None, limit: int
) -> None:
    """Print stored evaluations, newest first, one line each, with their gate verdict and,
    for nightlies, whether each is the baseline and why."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from evals.reports.terminal import emit, summary_console
    from evals.store import open_store

    store = open_store(store_url)
    try:
        metas = store.list_evaluations(suite_id=suite_id, environment=environment, limit=limit)
        baselines = baseline_column(store, metas)
    finally:
        store.close()
    colours = {"pass": "green", "fail": "red", "undetermined": "yellow"}
    rows = []
    for meta in metas:
        verdict = meta.verdict or "" if meta.status == "complete" else meta.status
        started = datetime.fromtimestamp(meta.started_at, UTC).strftime("%Y-%m-%d %H:%M")
        rows.append(
            {
                "id": escape(meta.id),
                "suite": escape(meta.suite_id),
                "version": escape(meta.suite_version or ""),
                "env": escape(meta.environment or ""),
                "branch": escape(meta.git_branch or ""),
                "commit": (meta.git_commit or "")[:8],
                "started (UTC)": started,
                "verdict": f"[{colours.get(verdict, 'default')}]{verdict}[/]",
                "baseline": escape(baselines.get(meta.id, "")),
            }
        )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    # never cut: `evals compare ID` and `--suite ID` take them (narrow, other columns give
    # way); a column no evaluation fills is left out
    for column in ("id", "suite"):
        width = max((len(row[column]) for row in rows), default=2)
        table.add_column(column, no_wrap=True, min_width=width)
    for column in ("version", "env", "branch", "commit"):
        if any(row[column] for row in rows):
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=28)
    table.add_column("started (UTC)")  # wraps at its space when narrow
    table.add_column("verdict", no_wrap=True)
    if any(row["baseline"] for row in rows):
        table.add_column("baseline", overflow="fold", max_width=60)
    for row in rows:
        table.add_row(*(row[str(column.header)] for column in table.columns))
    console = summary_console()  # a log or pipe: every row on one line, unpadded
    emit(console, lambda: console.print(table))


def agents_of(store: Store, evaluation_id: str) -> list[str]:
    """The agents of the evaluation's stored runs, sorted (its run keys read a batch at a
    time)."""
    return sorted({key[2] for key in store.iter_keys(evaluation_id)})


def _pick_agent(
    meta: EvaluationMeta, agents: list[str], wanted: str | None, default: str | None
) -> str:
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


@dataclasses.dataclass(slots=True)
class Side:
    """One side of a comparison: an evaluation, its suite outline, its runs, the agent.

    The runs are `records` when the caller holds them, else `runs` (the store), read a
    batch at a time whenever the comparison or its reports need them."""

    meta: EvaluationMeta
    outline: SuiteOutline
    records: list[RunRecord]
    agent: str
    runs: RunSource | None = None

    def iter_runs(self, order: RunOrder) -> Iterator[RunRecord]:
        """The side's runs in `order` (`RUN_ORDERS`)."""
        if self.runs is None:
            return iter(sorted(self.records, key=run_order_key(order)))
        return self.runs.iter_runs(order)


def _relabel(side: Side, label: str, shared: set[str], index: dict[str, int]) -> list[RunRecord]:
    """The side's runs of its agent on shared cases, as agent `label`, indexed by `index`."""
    return list(_relabelled(side.records, side.agent, label, shared, index))


def _relabelled(
    records: Iterable[RunRecord],
    agent: str,
    label: str,
    shared: set[str],
    index: dict[str, int],
) -> Iterator[RunRecord]:
    """`records` of `agent` on `shared` cases, as agent `label`, indexed by `index`."""
    for record in records:
        if record.key.agent != agent or record.key.case_id not in shared:
            continue
        key = RunKey(record.key.prompt_id, record.key.case_id, label, record.key.repeat)
        yield dataclasses.replace(record, key=key, case_index=index[record.key.case_id])


@dataclasses.dataclass(frozen=True, slots=True)
class ComparedRuns:
    """A comparison's runs, read from its two sides a batch at a time and relabelled as
    they pass (`RunSource`): the baseline's runs of its agent on the cases both suites
    share, and the candidate's of its agent, in one stream in the order asked (on a tie,
    the baseline's run first). When the two suites order their shared cases differently,
    the baseline's runs are sorted in memory (a comparison across versions of a suite)."""

    baseline: Side
    candidate: Side
    labels: tuple[str, str]
    shared: frozenset[str]
    index: dict[str, int]

    def iter_runs(self, order: RunOrder = "plan") -> Iterator[RunRecord]:
        """Every run of both sides, relabelled, in `order`."""
        key = run_order_key(order)
        base, cand = self.baseline, self.candidate
        ours = _relabelled(
            base.iter_runs(order), base.agent, self.labels[0], set(self.shared), self.index
        )
        theirs = _relabelled(
            cand.iter_runs(order), cand.agent, self.labels[1], set(self.index), self.index
        )
        positions = [self.index[c.id] for c in base.outline.cases if c.id in self.shared]
        if positions != sorted(positions):
            ours = iter(sorted(ours, key=key))
        return heapq.merge(ours, theirs, key=key)


def compare_sides(
    suite: Suite,
    baseline: Side,
    candidate: Side,
    gate_config: GateConfig,
    environment: str | None,
    *,
    allow_suite_change: bool = False,
    labels: tuple[str, str] = ("baseline", "candidate"),
    spend: float | None = None,
    quarantines: Sequence[TriageAction] = (),
    now: float | None = None,
    reuse: BaselineReuse | None = None,
) -> EvaluationResult:
    """Analyse one agent of a candidate evaluation against one agent of a baseline.

    The runs are relabelled `labels` and analysed with `gate_config` (whose baseline and
    candidate become those labels), spending `spend` of the build's false-failure budget
    (a staged look's share; None spends all of it), with the triage `quarantines` in force
    at `now`; `reuse` is stored runs standing in for the baseline, whose reserve the gates
    reading them keep (`evals.gates.decide.decide`). A change of agent code is the point of
    a comparison and is reported; a change of the suite is refused unless
    `allow_suite_change`, and then only the cases both suites define alike are compared,
    the differences listed. The candidate's cases the baseline lacks or defines otherwise
    (added or changed) are analysed all the same: they count in the candidate's own
    gates (pass rate, errors, policy, budgets), only the comparison leaves them out.
    """
    differences = suite_differences(baseline.outline, candidate.outline)
    if not differences.same_suite and not allow_suite_change:
        suites = (
            f"suite {candidate.meta.suite_id}"
            if baseline.meta.suite_id == candidate.meta.suite_id
            else f"suites {baseline.meta.suite_id} and {candidate.meta.suite_id}"
        )
        raise SuiteError(
            f"evaluations {baseline.meta.id} and {candidate.meta.id} ran different versions of "
            f"{suites} (fingerprint {baseline.meta.fingerprint[:12]} vs "
            f"{candidate.meta.fingerprint[:12]}): {len(differences.shared)} case(s) shared, "
            f"{len(differences.changed)} changed, {len(differences.added)} added, "
            f"{len(differences.removed)} removed",
            fix="pass --allow-fingerprint-mismatch (or set gates.allow_fingerprint_mismatch) "
            "to compare on the cases both share",
        )
    shared = set(differences.shared)
    index = {case.id: case.index for case in candidate.outline.cases}
    base_label, cand_label = labels
    outline = dataclasses.replace(candidate.outline, agent_labels=[base_label, cand_label])
    config = dataclasses.replace(gate_config, baseline=base_label, candidate=cand_label)
    records: list[RunRecord] = []
    source: ComparedRuns | None = None
    counted: Tally | Iterable[RunRecord]
    if baseline.runs is None and candidate.runs is None:  # both sides held by the caller
        records = _relabel(baseline, base_label, shared, index) + _relabel(
            candidate, cand_label, set(index), index
        )
        counted = records
    else:  # read from the store as they are counted; the reports read them again
        source = ComparedRuns(baseline, candidate, labels, frozenset(shared), index)
        counted = Tally(TallyRules.of(config))
        counted.add_all(source.iter_runs("cases"))
    summary, gates = analyse(
        outline,
        counted,
        config,
        environment,
        spend=spend,
        quarantines=quarantines,
        now=now,
        reuse=reuse,
    )
    notes = [
        *differences.lines(),
        agent_change(
            f"{baseline.agent} → {candidate.agent}"
            if baseline.agent != candidate.agent
            else candidate.agent,
            baseline.meta.agent_fingerprints.get(baseline.agent),
            candidate.meta.agent_fingerprints.get(candidate.agent),
        ),
    ]
    gates.warnings.extend(notes)
    meta = dataclasses.replace(
        candidate.meta,
        id=f"{baseline.meta.id}..{candidate.meta.id}",
        agents=[base_label, cand_label],
        config={
            **candidate.meta.config,
            "baseline_evaluation": baseline.meta.id,
            "candidate_evaluation": candidate.meta.id,
            "compared_at": time.time(),
        },
        agent_fingerprints={
            base_label: baseline.meta.agent_fingerprints.get(baseline.agent, ""),
            cand_label: candidate.meta.agent_fingerprints.get(candidate.agent, ""),
        },
    )
    if isinstance(counted, Tally):
        repeat = max(counted.repeats, 1)
    else:
        repeat = max((r.key.repeat for r in records), default=0) + 1
    compared = dataclasses.replace(
        suite,
        providers=[
            _provider(suite, baseline, base_label),
            _provider(suite, candidate, cand_label),
        ],
    )
    if isinstance(counted, Tally):
        return EvaluationResult(
            compared, meta, [], summary, gates, config, repeat, counted.facts(), source, counted
        )
    return EvaluationResult(compared, meta, records, summary, gates, config, repeat)


def _provider(suite: Suite, side: Side, label: str) -> ProviderSpec:
    """The side's agent as a provider of the compared result, relabelled `label`."""
    spec = next(
        (p for p in suite.providers if p.label == side.agent),
        ProviderSpec(id=side.agent, label=side.agent),
    )
    fingerprint = side.meta.agent_fingerprints.get(side.agent, spec.fingerprint)
    return dataclasses.replace(spec, label=label, fingerprint=fingerprint)


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
    baseline_branch: str = "main",
) -> EvaluationResult:
    """Analyse a stored candidate evaluation against a stored baseline evaluation.

    Defaults: the candidate is the latest evaluation (of `suite` when given, else of the
    named baseline's suite) and the baseline the baseline of `baseline_branch` with the
    same suite fingerprint. Without
    agent names, two evaluations compare the candidate agent of each (the suite's
    `gates.candidate`, or each one's only agent); one evaluation named twice compares its
    own baseline agent with its own candidate. An agent is never compared with itself.
    Agents may differ (that is what is compared); different suite fingerprints are
    refused unless explicitly allowed, and then compared on the cases both share. The
    result carries people's annotations of the compared agents' runs.
    """
    from evals.store import open_store
    from evals.team.triage import annotations_of

    store = open_store(store_url)
    try:
        suite_filter = None
        if suite and not suite.endswith((".yaml", ".yml")) and "/" not in suite:
            suite_filter = suite
        if (
            suite_filter is None
            and candidate_id is None
            and baseline_id not in (None, LATEST_NIGHTLY)
        ):
            # `evals compare ID`: the newest evaluation of ID's suite, whatever ran since
            suite_filter = _stored(store, baseline_id).suite_id
        candidate_meta = _resolve_candidate(store, candidate_id, suite_filter)
        suite_obj = _suite_for(candidate_meta, suite if suite_filter is None else None)
        allow = allow_fingerprint_mismatch or suite_obj.gates.allow_fingerprint_mismatch
        baseline_meta = _resolve_baseline(
            store, baseline_id, candidate_meta, baseline_branch, allow
        )
        base_agents = agents_of(store, baseline_meta.id)
        cand_agents = agents_of(store, candidate_meta.id)
        annotations = annotations_of(store, [baseline_meta.id, candidate_meta.id], time.time())
    finally:
        store.close()
    gate_config = suite_obj.gates.for_environment(environment)
    same = baseline_meta.id == candidate_meta.id
    # one evaluation with itself: its own baseline against its own candidate; two
    # evaluations: the candidate agent of each
    base_default = gate_config.baseline if same else gate_config.candidate
    base_agent = _pick_agent(baseline_meta, base_agents, baseline_agent, base_default)
    cand_agent = _pick_agent(candidate_meta, cand_agents, candidate_agent, gate_config.candidate)
    if same and base_agent == cand_agent:
        raise SuiteError(
            f"this compares agent {cand_agent!r} of evaluation {candidate_meta.id} with itself",
            fix="name two evaluations, or two of this evaluation's agents with "
            "--baseline-agent / --candidate-agent",
        )
    result = compare_sides(
        suite_obj,
        Side(
            baseline_meta,
            baseline_meta.suite_outline(),
            [],
            base_agent,
            StoredRuns(store_url, baseline_meta.id),
        ),
        Side(
            candidate_meta,
            candidate_meta.suite_outline(),
            [],
            cand_agent,
            StoredRuns(store_url, candidate_meta.id),
        ),
        gate_config,
        environment,
        allow_suite_change=allow,
    )
    result.annotations = [
        a
        for a in annotations
        if (a.evaluation_id, a.agent)
        in {(baseline_meta.id, base_agent), (candidate_meta.id, cand_agent)}
    ]
    return result


def _stored(store: Store, evaluation_id: str) -> StoredEvaluation:
    meta = store.get_evaluation(evaluation_id)
    if meta is None:
        raise SuiteError(
            f"the store has no evaluation {evaluation_id!r}",
            fix="list the stored evaluations with `evals history`",
        )
    return meta


def _resolve_candidate(
    store: Store, candidate_id: str | None, suite_id: str | None
) -> StoredEvaluation:
    if candidate_id:
        return _stored(store, candidate_id)
    metas = store.list_evaluations(suite_id=suite_id, limit=1)
    if not metas:
        raise SuiteError(
            "the store holds no evaluation to compare", fix="run `evals run SUITE` first"
        )
    return _stored(store, metas[0].id)  # with its outline, which listings leave out


LATEST_NIGHTLY = "latest"


def latest_nightly(
    store: Store, candidate: EvaluationMeta, branch: str = "main", any_suite_version: bool = False
) -> StoredEvaluation | None:
    """The newest baseline-eligible nightly of `branch` started before the candidate.

    Of the candidate's suite fingerprint, unless `any_suite_version`. Incomplete,
    sharded, pull-request and regraded evaluations never qualify.
    """
    fingerprint = None if any_suite_version else candidate.fingerprint
    found = store.baselines(candidate.suite_id, branch=branch, fingerprint=fingerprint)
    return next(
        (e for e in found if e.id != candidate.id and e.started_at <= candidate.started_at),
        None,
    )


def _resolve_baseline(
    store: Store,
    baseline_id: str | None,
    candidate: EvaluationMeta,
    branch: str,
    allow_suite_change: bool,
) -> StoredEvaluation:
    """The named baseline, else the baseline of `branch` started before the candidate (the
    newest nightly that is a baseline).

    `latest` names the default explicitly, so CI can name the candidate alone; a nightly
    candidate is thereby compared with the night before, never with itself. When the
    newest nightly ran another version of the suite, the error says so (and
    `allow_suite_change` takes it).
    """
    if baseline_id and baseline_id != LATEST_NIGHTLY:
        return _stored(store, baseline_id)
    meta = latest_nightly(store, candidate, branch)
    if meta is not None:
        return _stored(store, meta.id)
    other = latest_nightly(store, candidate, branch, any_suite_version=True)
    if other is not None and allow_suite_change:
        return _stored(store, other.id)
    if other is not None:
        raise SuiteError(
            f"the latest nightly of {branch} for suite {candidate.suite_id!r} ({other.id}) ran "
            f"another version of the suite (fingerprint {other.fingerprint[:12]}, this "
            f"evaluation {candidate.fingerprint[:12]}); agent changes never prevent a comparison, "
            "suite changes do",
            fix="pass --allow-fingerprint-mismatch to compare on the cases both versions share, "
            "or name the baseline evaluation",
        )
    raise SuiteError(
        f"the store holds no complete nightly evaluation of {branch} for suite "
        f"{candidate.suite_id!r} (incomplete, sharded, pull-request and regraded evaluations "
        "are never baselines)",
        fix="run the nightly first, or pass the baseline evaluation id (see `evals history`)",
    )
