"""`evals ci pr`: the whole pull-request job, from the baseline to the comment.

The question a pull request asks is whether it made an agent better or worse, so each
compared agent at the pull request's head is compared with the same agent at the merge
base (main's agent), on the suite's pull-request cases, with the same seeds on both sides
(paired, `gates.paired`): a run of the base and a run of the head that share a case and
a repeat share their seed, and their difference is measured within the pair.

The baseline costs as little as it can:

1. when the latest complete nightly of main ran the base's suite with the base's agent
   (same suite and agent fingerprints) and the same seeds, its stored runs are the
   baseline and no agent is called;
2. otherwise main's agent is run in this job from a git worktree of the merge base, in
   a child process, through a response cache primed with that nightly's stored
   responses: a call the nightly made with the same agent code, request and seed is
   answered from it, any other call goes to the agent.

The head's agent always runs. Compared are the agents whose agent fingerprint differs
between base and head (`--agent` to choose; with none changed, the gates' candidate).
When the pull request also changed the suite, the comparison keeps to the cases both
versions define alike and lists the rest; the cases it added or changed count in the
absolute gates (pass rate, errors, policy, budgets), and as a group of their own in the
minimum pass rate (`evals.ci.pr_plan.gate_new_cases`).

The job reads the team's store read-only (`--store`; a PostgreSQL session in read-only
transactions, or the nightly's SQLite artifact) and writes its own evaluations, with
environment `pr`, to a scratch store in the output folder: it never writes a baseline.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from evals.analysis.comparability import SuiteDifferences, suite_differences
from evals.ci.base_env import BaseEnvironment, base_environment
from evals.ci.checkout import (
    SuiteIdentity,
    base_checkout,
    describe_suite,
    git,
    harness_command,
    merge_base,
    repository_root,
)
from evals.ci.outputs import (
    error_outcome,
    exit_code,
    overall_verdict,
    undetermined_note,
    write_outputs,
)
from evals.ci.pr_plan import gate_new_cases, plan_pull_request
from evals.ci.provenance import CiContext, ci_context
from evals.gates.adaptive import settle
from evals.gates.baseline import DRIFT_RESERVE, GUARD_SHARE, drift, fresh_gates, fresh_in_full
from evals.gates.catalog import planned_test_split
from evals.model.ci import CiOutcome
from evals.model.errors import ExitCode, HarnessFault, SuiteError
from evals.model.evaluation import EvaluationResult
from evals.model.options import EvaluationState, RunOptions
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.model.summary import BaselineReuse, GateReport
from evals.model.triage import TriageAction
from evals.pipeline.adaptive import LookRequest, design_for, run_looks, runs_below
from evals.pipeline.evaluation import run_evaluation
from evals.pipeline.history import Side, compare_sides
from evals.pipeline.staged import cannot_fail, is_decided, look_spends
from evals.plan.runs import select_cases
from evals.team.triage import case_actions, quarantines

if TYPE_CHECKING:
    from evals.store import StoredEvaluation

SCRATCH_STORE = "pr.db"
CACHE_FILE = "responses.db"
GUARD_CACHE_FILE = "guard-responses.db"
GUARD_STORE = "guard.db"
P0_CACHE_FILE = "p0-responses.db"


@dataclass(slots=True)
class PrOptions:
    """What `evals ci pr` is told: the suite, where to read and write, how much to run.

    `store` is the baseline store, read only. `repeat` fixes the repeats; else `effect`
    asks the power plan for the repeats that detect that difference (at most
    `max_repeats`); else the suite's pull-request repeats. `stages` runs in stages of
    cumulative repeats until the gates are decided; `adaptive` (the most repeats per case)
    looks every `look_every` repeats and runs only the cases an undetermined gate reads,
    within `budget_runs` and `budget_cost` (default: the `pr` environment's) and with the
    pass side's futility reach `pass_reach` (`evals.pipeline.adaptive`). `resume` keeps
    the scratch store of a stopped job in `out` and runs only what it lacks. `seed`
    defaults to the nightly's, so its stored responses can serve the baseline;
    `fresh_baseline` runs main's agent fresh whatever the nightly stored.
    """

    suite: Path
    out: Path = Path(".evals/ci")
    store: str | None = None
    base: str | None = None
    agents: list[str] | None = None
    repeat: int | None = None
    effect: float | None = None
    max_repeats: int = 20
    stages: tuple[int, ...] | None = None
    adaptive: int | None = None
    look_every: int = 2
    pass_reach: float | None = None
    budget_runs: int | None = None
    budget_cost: float | None = None
    resume: bool = False
    seed: int | None = None
    evaluation_id: str | None = None
    concurrency: int | None = None
    timeout_s: float | None = None
    nightly_branch: str | None = None
    report_url: str | None = None
    env_cache: Path | None = None
    fresh_baseline: bool = False


@dataclass(slots=True)
class _Nightly:
    """The stored nightly that may serve the baseline, and what reading it said."""

    meta: StoredEvaluation | None = None
    records: list[RunRecord] = field(default_factory=list)
    note: str = ""
    # Said of a nightly that serves main's side without being the baseline.
    remark: str = ""
    # Why its runs and responses may not serve main's side (main's agent runs fresh).
    refused: str = ""


@dataclass(slots=True)
class _Baseline:
    """Main's side of the comparison at one stage; `ran` when it ran in this job."""

    meta: StoredEvaluation
    records: list[RunRecord]
    note: str
    ran: bool = False


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "agent"


def _held_quarantines(store_url: str | None, suite: Suite, now: float) -> list[TriageAction]:
    """The team store's quarantines of the suite in force at `now`, read only; none without
    a store (the gates then decide over every case)."""
    if not store_url or ("://" not in store_url and not Path(store_url).is_file()):
        return []
    return quarantines(store_url, suite.suite_id, now)


def _case_triage(store_url: str | None, suite: Suite, now: float) -> list[TriageAction]:
    """The team store's triage actions and annotations of the suite's cases in force at
    `now`, read only, for the comment to show beside the cases it names; none without a
    store."""
    if not store_url or ("://" not in store_url and not Path(store_url).is_file()):
        return []
    return case_actions(store_url, suite.suite_id, now)


def _checked_store(store_url: str | None) -> tuple[str | None, str]:
    """(the baseline store when it is whole, else None; a note when it is not). A store
    that fails its check is never read: main's agent then runs in the job."""
    if not store_url or ("://" not in store_url and not Path(store_url).is_file()):
        return store_url, ""
    from evals.store.integrity import check_store

    checked = check_store(store_url)
    if checked.ok:
        return store_url, ""
    return None, (
        f"the baseline store failed its check and is not read ({checked.detail}); main's "
        "agent runs in this job, and no quarantine applies"
    )


def _is_mains(meta: StoredEvaluation, base: SuiteIdentity, agents: Sequence[str]) -> bool:
    """True when the stored nightly ran the base's suite and the base's `agents`."""
    return meta.fingerprint == base.outline.fingerprint and all(
        meta.agent_fingerprints.get(a) == base.agent_fingerprints.get(a) for a in agents
    )


def _read_nightly(
    store_url: str | None, suite: Suite, branch: str, agents: Sequence[str], base: SuiteIdentity
) -> _Nightly:
    """The stored nightly of `branch` that serves main's side, read only: the newest one
    that ran main's agents as they are at the merge base (its runs are main's runs, even
    when that nightly is not the baseline: main regressed and nobody accepted it yet),
    else the baseline (its responses prime the cache)."""
    if not store_url:
        return _Nightly(note="no baseline store was given (--store)")
    if "://" not in store_url and not Path(store_url).is_file():
        return _Nightly(note=f"no store at {store_url} (no nightly has stored one yet)")
    from evals.store import open_store

    try:
        store = open_store(store_url, read_only=True)
    except (HarnessFault, SuiteError, OSError) as exc:
        return _Nightly(note=f"the baseline store could not be read: {exc}")
    try:
        found = store.baselines(suite.suite_id, branch=branch, chosen=False)
        if not found:
            return _Nightly(note=f"the store holds no complete nightly of {branch}")
        statuses = store.baseline_statuses(found)
        chosen = next((m for m in found if statuses[m.id].chosen), None)
        mains = next((m for m in found if _is_mains(m, base, agents)), None)
        picked = mains or chosen or found[0]
        note = ""
        if mains is not None and not statuses[mains.id].chosen:
            note = (
                f"main's agent at the merge base is the one nightly `{mains.id}` ran, which is "
                f"not the baseline ({statuses[mains.id].reason}): this pull request is "
                "compared with main as it is, and the nightly keeps reporting main's drop"
            )
        meta = store.get_evaluation(picked.id)
        assert meta is not None
        records = [r for agent in agents for r in store.load_runs(meta.id, agent=agent)]
        return _Nightly(meta, records, remark=note)
    finally:
        store.close()


def compared_agents(
    head: Suite, base: SuiteIdentity, requested: list[str] | None
) -> tuple[list[str], list[str]]:
    """(agents to compare, notes): changed agents by default, else the gates' candidate."""
    notes = []
    new = [label for label in head.agent_labels if label not in base.agent_fingerprints]
    if new:
        notes.append(f"new in this pull request, not compared: {', '.join(new)}")
    if requested:
        unknown = [label for label in requested if label not in head.agent_labels]
        if unknown:
            raise SuiteError(
                f"the suite has no agent {unknown[0]!r}",
                file=str(head.path),
                fix=f"choose among {', '.join(head.agent_labels)}",
            )
        return [label for label in requested if label not in new], notes
    fingerprints = head.agent_fingerprints
    changed = [
        label
        for label in head.agent_labels
        if label not in new and base.agent_fingerprints[label] != fingerprints[label]
    ]
    if changed:
        notes.insert(0, f"changed agent(s): {', '.join(changed)}")
        return changed, notes
    fallback = head.gates.candidate if head.gates.candidate in head.agent_labels else None
    chosen = [fallback or head.agent_labels[0]]
    if chosen[0] in new:
        return [], notes
    notes.insert(0, f"no agent changed between base and head; compared: {chosen[0]}")
    return chosen, notes


def _reusable(
    nightly: _Nightly,
    base: SuiteIdentity,
    agents: list[str],
    cases: list[str],
    repeat: int,
    seed: int,
) -> list[RunRecord] | None:
    """The nightly's runs that are exactly main's baseline runs, or None when they are not.

    They are when the nightly ran the base's suite and agents with the same seeds and
    holds every (case, agent, repeat) the comparison needs.
    """
    meta = nightly.meta
    if meta is None or meta.fingerprint != base.outline.fingerprint:
        return None
    if (meta.config.get("seed") or 0) != seed:
        return None
    if any(meta.agent_fingerprints.get(a) != base.agent_fingerprints.get(a) for a in agents):
        return None
    wanted = set(cases)
    chosen = [r for r in nightly.records if r.key.case_id in wanted and r.key.repeat < repeat]
    have = {(r.key.case_id, r.key.agent, r.key.repeat) for r in chosen}
    needed = {(c, a, r) for c in cases for a in agents for r in range(repeat)}
    return chosen if needed <= have else None


def _short_nightly(
    nightly: _Nightly,
    base: SuiteIdentity,
    agents: list[str],
    cases: list[str],
    repeat: int,
    seed: int,
) -> str | None:
    """When the nightly is main's agent but stored fewer repeats than `repeat`, the
    sentence that says so and how to make main's side free; else None."""
    stored = int((nightly.meta.config.get("repeat") if nightly.meta else 0) or 0)
    if not 0 < stored < repeat or _reusable(nightly, base, agents, cases, stored, seed) is None:
        return None
    return (
        f"the nightly stored {stored} repeat(s) of main's agent and this job needed {repeat}: "
        f"main's agent ran here for the rest; a nightly of at least {repeat} repeats "
        "(`gates.environments.nightly.repeat`, the last stage of `--until-decided`) makes "
        "main's side free"
    )


def _run_base(
    base_suite: Path,
    base_root: Path,
    environment: BaseEnvironment,
    scratch: str,
    cache: Path,
    evaluation_id: str,
    agents: list[str],
    cases: list[str],
    repeat: int,
    seed: int,
    options: PrOptions,
    resume: bool,
    look: int | None = None,
) -> None:
    """Run main's agents over the base's suite in a child process of `environment`, into
    the scratch store; an adaptive comparison's `look` is recorded on each run."""
    args = [
        "run",
        str(base_suite),
        "--store",
        scratch,
        "--repeat",
        str(repeat),
        "--seed",
        str(seed),
        "--cache",
        str(cache),
        "--env",
        "pr",
        "--no-progress",
        "--quiet",
    ]
    args += ["--resume", evaluation_id] if resume else ["--evaluation-id", evaluation_id]
    if look is not None:
        args += ["--look", str(look)]
    for agent in agents:
        args += ["--agent", agent]
    for case_id in cases:
        args += ["--case", case_id]
    if options.concurrency:
        args += ["--concurrency", str(options.concurrency)]
    if options.timeout_s:
        args += ["--timeout", str(options.timeout_s)]
    answer = subprocess.run(
        harness_command(environment.python, *args),
        cwd=base_root,
        env=environment.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if answer.returncode == ExitCode.INVALID_INPUT:
        raise SuiteError(
            f"main's suite could not run: {answer.stderr.strip()}", file=str(base_suite)
        )
    if answer.returncode not in (ExitCode.OK, ExitCode.GATE_FAILED):
        tail = "\n".join(answer.stderr.strip().splitlines()[-20:])
        raise HarnessFault(f"running main's agents failed (exit {answer.returncode}): {tail}")


def _stored(scratch: str, evaluation_id: str) -> bool:
    """True when the scratch store holds evaluation `evaluation_id` (a job resumed)."""
    if not Path(scratch).is_file():
        return False
    from evals.store import open_store

    store = open_store(scratch)
    try:
        return store.get_evaluation(evaluation_id) is not None
    finally:
        store.close()


def _strata(records: Sequence[RunRecord]) -> dict[str, tuple[int, int]]:
    """(passes, counted runs) per agent and case, errors left out: the drift guard's strata."""
    counts: dict[str, list[int]] = {}
    for record in records:
        if record.status != "error":
            tally = counts.setdefault(f"{record.key.agent}/{record.key.case_id}", [0, 0])
            tally[0] += record.status == "pass"
            tally[1] += 1
    return {key: (passes, runs) for key, (passes, runs) in counts.items()}


def _looked(records: Sequence[RunRecord], agent: str, repeat: int) -> list[RunRecord]:
    """`agent`'s runs below `repeat` repeats: what a look after `repeat` repeats reads, never
    the runs a resumed job stored for later looks."""
    return [r for r in records if r.key.agent == agent and r.key.repeat < repeat]


def _paired(base: Sequence[RunRecord], head: Sequence[RunRecord]) -> list[RunRecord]:
    """The base's runs of the (case, repeat) pairs the head ran: the baseline of a look."""
    keys = {(r.key.case_id, r.key.repeat) for r in head}
    return [r for r in base if (r.key.case_id, r.key.repeat) in keys]


def _load(scratch: str, evaluation_id: str) -> tuple[StoredEvaluation, list[RunRecord]]:
    from evals.store import open_store

    store = open_store(scratch)
    try:
        meta = store.get_evaluation(evaluation_id)
        if meta is None:
            raise HarnessFault(f"the scratch store has no evaluation {evaluation_id}")
        return meta, store.load_runs(evaluation_id)
    finally:
        store.close()


@dataclass(slots=True)
class _Sides:
    """What both sides of one comparison share: main's suite in its checkout, the compared
    agents, the nightly, the seed and the head's evaluation id."""

    identity: SuiteIdentity
    base_suite: Path
    base_root: Path
    environment: BaseEnvironment
    agents: list[str]
    nightly: _Nightly
    seed: int
    head_id: str
    base_cases: list[str] = field(default_factory=list)
    now: float = field(default_factory=time.time)


@dataclass(slots=True)
class _PrLooks:
    """The looks of an adaptive comparison (`evals.pipeline.adaptive.LookRunner`): each look
    runs main's and the pull request's agents on the cases still open for them, then
    compares each agent on the runs below the look's repeats. An agent whose verdict is
    decided runs no further and keeps the comparison that decided it."""

    job: _PullRequest
    sides: _Sides
    held: list[TriageAction]
    head: EvaluationResult | None = None
    baseline: _Baseline | None = None
    base_runs: dict[tuple[str, str, int], RunRecord] = field(default_factory=dict)
    # Where main's runs came from: the nightly's stored runs, this job's runs (the last).
    sources: dict[bool, str] = field(default_factory=dict)
    results: list[EvaluationResult] = field(default_factory=list)

    def planned(self, repeats: int, previous: int, active: Sequence[frozenset[str]]) -> int:
        # Every open agent runs on the cases open for any agent (`look`), on both sides.
        cases = frozenset().union(*active)
        sides = len(cases & set(self.job.cases)) + len(cases & set(self.sides.base_cases))
        return (repeats - previous) * sides * sum(1 for c in active if c)

    def spent(self, repeats: int) -> tuple[int, float | None]:
        if self.head is None or self.baseline is None:
            return 0, 0.0
        runs: list[RunRecord] = []
        for agent in self.sides.agents:
            head = _looked(self.head.records, agent, repeats)
            runs += head + _paired(_looked(self.baseline.records, agent, repeats), head)
        return runs_below(runs, repeats)

    def look(self, request: LookRequest) -> list[GateReport]:
        sides = self.sides
        agents = [a for a, cases in zip(sides.agents, request.active, strict=True) if cases]
        cases = request.cases
        base_cases = [c for c in sides.base_cases if c in cases]
        baseline = self.job.baseline_runs(
            sides, agents, base_cases, request.repeats, request.number
        )
        # Main's runs of every look so far: a look may reuse the nightly's, another run them.
        for record in baseline.records:
            if record.key.agent in agents:
                key = (record.key.agent, record.key.case_id, record.key.repeat)
                self.base_runs[key] = record
        self.baseline = replace(
            baseline, records=[self.base_runs[k] for k in sorted(self.base_runs)]
        )
        self.sources[baseline.ran] = baseline.note
        self.head = self.job.run_head(
            sides, agents, request.repeats, self.head, look=request.number, active=cases
        )
        runs = self.spent(request.repeats)[0]
        results = []
        for arm, agent in enumerate(sides.agents):
            if agent not in agents:
                results.append(self.results[arm])
                continue
            result = self.job.compared(
                sides, agent, self.baseline, self.head, request.repeats, request.spend, self.held
            )
            result.gates = settle(
                result.gates,
                request.frozen[arm],
                request.number,
                request.repeats,
                runs,
                request.futile,
            )
            results.append(result)
        self.results = results
        return [result.gates for result in results]


class _PullRequest:
    """One `evals ci pr` job: its inputs, and what it learnt along the way."""

    def __init__(self, options: PrOptions, context: CiContext) -> None:
        self.options = options
        self.context = context
        # Absolute: main's agent runs in another folder and writes here too.
        self.out = options.out.resolve()
        self.head = _load_head(options.suite)
        _refuse_notices(self.head)
        self.repo = repository_root(self.head.path)
        if not self.head.path.is_relative_to(self.repo):
            raise SuiteError(
                "the suite is not inside the git repository it is evaluated in",
                file=str(self.head.path),
                fix="run evals ci pr on a suite of the repository's checkout",
            )
        self.config = replace(self.head.gates.for_environment("pr"), paired=True)
        self.cases = [c.id for c in select_cases(self.head.cases, self.config.tags, None)]
        # The suite the comparisons read: the head's, with its new and changed cases
        # gated as a group once they are known (`gate_new_cases`).
        self.gated = self.head
        self.scratch = str(self.out / SCRATCH_STORE)
        self.notes: list[str] = []
        # Notes shown above the fold of the comment (where main's runs came from, ...).
        self.key_notes: list[str] = []
        self.primed: int | None = None
        # The drift guard's verdict on the nightly's runs and its fresh runs, once found.
        self.guard: BaselineReuse | None = None
        self.guard_runs: list[RunRecord] = []
        # Main's runs of the P0 cases, run fresh in full while the nightly answers for main.
        self.p0_runs: dict[tuple[str, str, int], RunRecord] = {}
        self.differences: SuiteDifferences | None = None
        self.store, self.store_note = _checked_store(options.store)
        self.base_fingerprints: dict[str, str] = {}
        # Why main's agent ran although the nightly is main's: it stored too few repeats.
        self.short_nightly: str | None = None

    def run(self) -> CiOutcome:
        refs = self._base_refs()
        base_ref, base_commit = merge_base(self.repo, refs)
        head_commit = git(self.repo, "rev-parse", "HEAD")
        number = self.context.pull_request
        head_id = self.options.evaluation_id or f"pr-{number or 'local'}-{head_commit[:10]}"
        relative = self.head.path.relative_to(self.repo)
        with base_checkout(self.repo, base_commit) as base_root:
            base_suite = base_root / relative
            if not base_suite.exists():
                return self._new_suite(head_id)
            folder = relative if self.head.path.is_dir() else relative.parent
            with base_environment(
                self.repo, base_root, folder, self.options.env_cache
            ) as environment:
                compared = self._against_base(base_suite, base_root, environment, base_ref, head_id)
        if isinstance(compared, CiOutcome):
            return compared
        agents, results, repeats = compared
        title = (
            f"{', '.join(f'`{a}`' for a in agents)} at `{base_commit[:10]}` (merge base with "
            f"`{base_ref}`) → `{head_commit[:10]}` (this pull request): "
            f"{len(self.cases)} case(s) × {repeats}, paired by seed"
        )
        self.notes.append(
            f"this job wrote no baseline: its evaluations are in the scratch store "
            f"`{self.scratch}` (environment pr)"
        )
        return self._outcome(results, title)

    def _against_base(
        self,
        base_suite: Path,
        base_root: Path,
        environment: BaseEnvironment,
        base_ref: str,
        head_id: str,
    ) -> tuple[list[str], list[EvaluationResult], str] | CiOutcome:
        """Describe main's suite in `environment`, then compare (agents, results, repeats
        in words), or gate the head on its own when main has nothing to compare with."""
        identity = describe_suite(base_suite, base_root, environment)
        if identity is None:
            return self._new_suite(head_id)
        agents, agent_notes = compared_agents(self.head, identity, self.options.agents)
        if not agents:
            return self._new_suite(head_id)
        self.base_fingerprints = {a: identity.agent_fingerprints[a] for a in agents}
        self.notes += agent_notes
        self.key_notes.append(environment.description)
        self.differences = suite_differences(identity.outline, self.head.outline())
        edited = {*self.differences.added, *self.differences.changed} & set(self.cases)
        self.gated, self.config = gate_new_cases(self.head, self.config, edited)
        branch = self.options.nightly_branch or base_ref.removeprefix("origin/")
        nightly = _read_nightly(self.store, self.head, branch, agents, identity)
        if self.store_note:
            nightly.note = self.store_note
        nightly.refused = self._refused(agents)
        if nightly.remark:
            self.notes.append(nightly.remark)
        seed = self._seed(nightly)
        base_cases = [c for c in self.cases if c in {x.id for x in identity.outline.cases}]
        sides = _Sides(
            identity,
            base_suite,
            base_root,
            environment,
            agents,
            nightly,
            seed,
            head_id,
            base_cases,
        )
        if self.options.adaptive is not None:
            results = self._adaptive(sides, self.options.adaptive)
            return agents, results, f"up to {max(r.repeat for r in results)} repeat(s)"
        stages = self._stages(nightly)
        results = self._compare(sides, stages)
        return agents, results, f"{results[0].repeat if results else stages[-1]} repeat(s)"

    def _refused(self, agents: list[str]) -> str:
        """Why the nightly may not answer for main's `agents` (empty when it may): asked
        fresh (`--fresh-baseline`, `gates.reuse_baseline: false`), or an agent whose
        fingerprint cannot see its code (`ProviderSpec.fingerprint_gap`)."""
        if self.options.fresh_baseline:
            return "--fresh-baseline"
        if not self.config.reuse_baseline:
            return "gates.reuse_baseline is false"
        gaps = [
            f"{p.label}: {p.fingerprint_gap}"
            for p in self.head.providers
            if p.label in agents and p.fingerprint_gap
        ]
        return "; ".join(gaps)

    def _base_refs(self) -> list[str]:
        if self.options.base:
            return [self.options.base]
        base = self.context.base_ref
        return [f"origin/{base}", base] if base else ["origin/main", "main"]

    def _seed(self, nightly: _Nightly) -> int:
        if self.options.seed is not None:
            return self.options.seed
        return int((nightly.meta.config.get("seed") if nightly.meta else 0) or 0)

    def _stages(self, nightly: _Nightly) -> tuple[int, ...]:
        """The cumulative repeats of each stage (one stage unless --until-decided)."""
        options = self.options
        stored = None
        if nightly.meta is not None and nightly.meta.summary:
            stored = (nightly.meta.id, nightly.meta.summary)
        plan = plan_pull_request(
            self.gated,
            cases=len(self.cases),
            repeats=options.repeat or self.config.repeat or self.head.evaluate_options.repeat,
            final_repeats=options.stages[-1] if options.stages else None,
            effect=options.effect,
            max_repeats=options.max_repeats,
            nightly=stored,
        )
        self.notes += plan.notes
        return options.stages or (plan.repeats,)

    def _compare(self, sides: _Sides, stages: tuple[int, ...]) -> list[EvaluationResult]:
        spends: list[float | None] = (
            list(look_spends(self.config.confidence, stages)) if len(stages) > 1 else [None]
        )
        config = self.config
        held = _held_quarantines(self.store, self.head, sides.now)
        head_result: EvaluationResult | None = None
        baseline: _Baseline | None = None
        looks: list[str] = []
        results: list[EvaluationResult] = []
        stop = ""
        for stage, (repeat, spend) in enumerate(zip(stages, spends, strict=True)):
            baseline = self.baseline_runs(sides, sides.agents, sides.base_cases, repeat)
            head_result = self.run_head(sides, sides.agents, repeat, head_result, spend=spend)
            results = [
                self.compared(sides, agent, baseline, head_result, repeat, spend, held)
                for agent in sides.agents
            ]
            looks.append(f"{repeat} repeat(s): {overall_verdict(results, rule=False)}")
            stop = self._stop(results, stage, stages, spends)
            if stop:
                break
        assert baseline is not None and head_result is not None
        headline = self._headline(sides)
        self.key_notes += [baseline.note] if headline is None else [headline, baseline.note]
        self.notes.append(self._calls(sides.agents, head_result, baseline, repeat))
        if len(stages) > 1:
            self.notes.append(
                f"staged until decided: {len(looks)} of {len(stages)} stage(s) "
                f"({'; '.join(looks)}); {stop or 'the last stage was reached'}; each look "
                "spends its share of the false-failure budget "
                f"{1 - config.confidence:.3g} (in proportion to the repeats it adds), so a false "
                "failure at any look stays within it"
            )
        return results

    def _headline(self, sides: _Sides) -> str | None:
        """What happened to main's side, in one line, when the nightly could have answered
        for it: its runs reused (or drift found by the guard), or refused; None otherwise."""
        if sides.nightly.refused and sides.nightly.meta is not None:
            return f"baseline: main's agent run fresh ({sides.nightly.refused})"
        return self.guard.headline() if self.guard is not None else None

    def _calls(
        self, agents: list[str], head: EvaluationResult, baseline: _Baseline, repeat: int
    ) -> str:
        """The agent calls this comparison made (the pull request's runs, main's runs not
        answered from stored ones, the drift guard's) against both sides run fresh, in one
        line."""
        head_runs = [r for agent in agents for r in _looked(head.records, agent, repeat)]
        base_runs = [r for agent in agents for r in _looked(baseline.records, agent, repeat)]
        called = sum(1 for r in base_runs if not r.response.cached) if baseline.ran else 0
        calls = len(head_runs) + called + len(self.guard_runs) + len(self.p0_runs)
        fixed = len(head_runs) + len(base_runs)
        saved = fixed - calls
        share = f", {saved / fixed:.0%}" if fixed else ""
        return (
            f"agent calls: {calls} against {fixed} with both sides run fresh at {repeat} "
            f"repeat(s) ({saved} saved{share})"
        )

    def _stop(
        self,
        results: list[EvaluationResult],
        stage: int,
        stages: tuple[int, ...],
        spends: list[float | None],
    ) -> str:
        """Why the staged comparison stops after stage `stage` (empty: it goes on): every
        compared agent's verdict decided, or, where an undetermined verdict passes, no open
        gate of an undecided one able to fail by the last stage (`cannot_fail`, the rule
        `evals run --until-decided` applies)."""
        if len(stages) == 1 or stage == len(stages) - 1:
            return "the last stage was reached" if len(stages) > 1 else ""
        if all(is_decided(r.gates) for r in results):
            return "every compared agent's verdict was decided"
        # the reserve a stored baseline keeps is in each gate's share (`decide`)
        budgets = [float(s or 0.0) for s in spends]
        if all(
            is_decided(r.gates) or cannot_fail(r.gates, stage, stages, budgets) for r in results
        ):
            return (
                "no open gate could still fail by the last stage, and a pull request passes "
                "an undetermined verdict"
            )
        return ""

    def _adaptive(self, sides: _Sides, last: int) -> list[EvaluationResult]:
        """Compare look by look (`evals.pipeline.adaptive.run_looks`), one arm per agent."""
        options = self.options
        design = design_for(
            self.config,
            last,
            options.look_every,
            options.pass_reach,
            options.budget_runs,
            options.budget_cost,
        )
        labels = (f"{sides.agents[0]}@base", f"{sides.agents[0]}@head")
        compared = replace(self.config, baseline=labels[0], candidate=labels[1])
        spends = design.spends(
            self.config.confidence, planned_test_split(self.gated, "pr", compared)
        )
        per_repeat = len(sides.agents) * (len(self.cases) + len(sides.base_cases))
        looks = _PrLooks(self, sides, _held_quarantines(self.store, self.head, sides.now))
        cases = select_cases(self.gated.cases, self.config.tags, None)
        run = run_looks(design, looks, cases, spends, design.last * per_repeat, sides.agents)
        headline = self._headline(sides)
        self.key_notes += [*([headline] if headline else []), *looks.sources.values()]
        results = looks.results
        decided = []
        for arm, result in enumerate(results):
            summary = run.summary(arm)
            result.gates = replace(result.gates, adaptive=summary)
            gates = ", ".join(
                f"{g.name} {g.status} at look {g.look} after {g.runs} runs" for g in summary.decided
            )
            who = f" for {sides.agents[arm]}" if len(results) > 1 else ""
            decided.append(f"{who}: {gates or 'none'}")
        self.notes.append(
            f"adaptive: {len(run.looks)} look(s) of up to {design.last} repeats, every "
            f"{design.every}; gates decided{';'.join(decided)}; stopped because "
            f"{run.stop_reason}; {run.runs} runs of main's and this pull request's agents "
            f"against {run.fixed_runs} for {design.last} repeats of every case: {run.saved} "
            "agent calls saved"
        )
        return results

    def run_head(
        self,
        sides: _Sides,
        agents: list[str],
        repeat: int,
        previous: EvaluationResult | None,
        *,
        spend: float | None = None,
        look: int | None = None,
        active: frozenset[str] | None = None,
    ) -> EvaluationResult:
        """Run the pull request's agents up to `repeat` repeats into the scratch store,
        going on from `previous`, resuming a stopped job's evaluation."""
        resume = (
            sides.head_id
            if previous is None and self.options.resume and _stored(self.scratch, sides.head_id)
            else None
        )
        return run_evaluation(
            self.head,
            RunOptions(
                repeat=repeat,
                concurrency=self.options.concurrency,
                timeout_s=self.options.timeout_s,
                case_ids=self.cases,
                agents=agents,
                environment="pr",
                store_url=self.scratch,
                progress=False,
                evaluation_id=sides.head_id,
                resume=resume,
                seed=sides.seed,
                branch=self.context.branch,
            ),
            previous,
            EvaluationState(spend=spend, look=look, active_cases=active),
        )

    def compared(
        self,
        sides: _Sides,
        agent: str,
        baseline: _Baseline,
        head: EvaluationResult,
        repeat: int,
        spend: float | None,
        held: list[TriageAction],
    ) -> EvaluationResult:
        """`agent` at the head against the base on the runs below `repeat` repeats."""
        head_records = _looked(head.records, agent, repeat)
        base_records = _paired(_looked(baseline.records, agent, repeat), head_records)
        guard = self.guard
        # While the nightly's runs answer for main, the gates reading them keep the guard's
        # reserve against a drift it missed; the P0 gate, on fresh runs only, its whole share.
        result = compare_sides(
            self.gated,
            Side(baseline.meta, baseline.meta.suite_outline(), base_records, agent),
            # The suite's own thresholds: the new cases' group is the job's, not an edit.
            Side(
                head.meta, replace(self.gated.outline(), gates=self.head.gates), head_records, agent
            ),
            self.config,
            "pr",
            allow_suite_change=True,
            labels=(f"{agent}@base", f"{agent}@head"),
            spend=spend,
            quarantines=held,
            now=sides.now,
            reuse=guard,
        )
        result.gates.reuse = guard
        return result

    def drift_guard(
        self, sides: _Sides, agents: list[str], cases: list[str], repeat: int
    ) -> BaselineReuse | None:
        """The drift guard, once per job, when the nightly ran main's `agents` as they are
        at the merge base with the job's seeds (its runs would answer for them):
        `GUARD_SHARE` of `repeat` repeats of every case (at least one) run fresh in the base
        checkout, without the nightly's responses and into a store of their own, and
        compared with the nightly's runs of the same cases (`evals.gates.baseline.drift`,
        each agent's case a stratum). When the P0 gate is on, every run of the P0 cases
        runs fresh instead (`fresh_p0_runs`), so the P0 gate compares fresh runs only and
        keeps its whole share. None when the nightly's runs would not answer."""
        nightly = sides.nightly
        if self.guard is not None or nightly.meta is None or nightly.refused:
            return self.guard
        meta = nightly.meta
        if (meta.config.get("seed") or 0) != sides.seed or any(
            meta.agent_fingerprints.get(a) != sides.identity.agent_fingerprints.get(a)
            for a in agents
        ):
            return None
        wanted = set(cases)
        stored = [r for r in nightly.records if r.key.agent in agents and r.key.case_id in wanted]
        if not stored:
            return None
        p0 = self._p0_cases(cases)
        others = [c for c in cases if c not in p0]
        share = max(1, round(GUARD_SHARE * repeat))
        fresh: list[RunRecord] = []
        if others:
            fresh = self._run_fresh(sides, "guard", GUARD_CACHE_FILE, agents, others, share)
        full = self.fresh_p0_runs(sides, agents, p0, repeat) if p0 else []
        fresh_counts, stored_counts = _strata(fresh + full), _strata(stored)
        found = drift(fresh_counts, {k: n for k, n in stored_counts.items() if k in fresh_counts})
        self.guard_runs = fresh
        self.guard = BaselineReuse(
            source=meta.id,
            agent=", ".join(agents),
            reused=sum(1 for r in stored if r.key.case_id not in p0),
            guard=len(fresh) + len(full),
            fresh_rate=found.fresh_rate,
            stored_rate=found.stored_rate,
            p_value=found.p_value,
            level=found.level,
            fell_back=found.drifted,
            reserve=DRIFT_RESERVE,
            fresh_gates=fresh_gates(p0),
        )
        return self.guard

    def _run_fresh(
        self,
        sides: _Sides,
        name: str,
        cache_file: str,
        agents: list[str],
        cases: list[str],
        repeat: int,
        look: int | None = None,
    ) -> list[RunRecord]:
        """Run main's `agents` on `cases` fresh in the base checkout, into evaluation
        `<head id>-<name>` of the guard's store with a response cache of its own (a resumed
        job, a later stage or look, goes on from it); all its runs."""
        evaluation_id = f"{sides.head_id}-{name}"
        store = str(self.out / GUARD_STORE)
        resumed = _stored(store, evaluation_id)
        cache = self.out / cache_file  # its own: these runs are called fresh
        if not resumed:
            cache.unlink(missing_ok=True)
        _run_base(
            sides.base_suite,
            sides.base_root,
            sides.environment,
            store,
            cache,
            evaluation_id,
            agents,
            cases,
            repeat,
            sides.seed,
            self.options,
            resumed,
            look,
        )
        return _load(store, evaluation_id)[1]

    def _p0_cases(self, cases: Sequence[str]) -> list[str]:
        """The P0 cases among `cases` when the P0 gate is on: main's runs of them are run
        fresh in full while the nightly answers for main, so the P0 gate never compares a
        stored run and needs no reserve (the rule `evals run` follows,
        `evals.pipeline.reuse.guarded_runs`)."""
        p0 = fresh_in_full(self.config, self.head.cases)
        return [c for c in cases if c in p0]

    def fresh_p0_runs(
        self,
        sides: _Sides,
        agents: list[str],
        cases: list[str],
        repeat: int,
        look: int | None = None,
    ) -> list[RunRecord]:
        """Main's runs of `agents` on the P0 `cases` up to `repeat` repeats, run fresh in
        the base checkout, without the nightly's responses, into the guard's store (a later
        stage or look adds the repeats it lacks); they replace the nightly's runs of those
        cases."""
        stored = self._run_fresh(sides, "p0", P0_CACHE_FILE, agents, cases, repeat, look)
        wanted = set(cases)
        runs = [
            r for agent in agents for r in _looked(stored, agent, repeat) if r.key.case_id in wanted
        ]
        self.p0_runs.update({(r.key.agent, r.key.case_id, r.key.repeat): r for r in runs})
        return runs

    def baseline_runs(
        self,
        sides: _Sides,
        agents: list[str],
        cases: list[str],
        repeat: int,
        look: int | None = None,
    ) -> _Baseline:
        """Main's runs of `agents` on `cases` up to `repeat` repeats: the nightly's when they
        are main's, else run in the base checkout (resumed when the scratch store has them)."""
        nightly = sides.nightly
        guard = self.drift_guard(sides, agents, cases, repeat)
        drifted = guard is not None and guard.fell_back
        reused = None
        if not nightly.refused:
            reused = _reusable(nightly, sides.identity, agents, cases, repeat, sides.seed)
        p0 = self._p0_cases(cases) if guard is not None else []
        if reused is not None and nightly.meta is not None and not drifted:
            checked = f"; {guard.describe()}" if guard is not None else ""
            called = "no agent called for it"
            if p0:
                fresh = self.fresh_p0_runs(sides, agents, p0, repeat, look)
                reused = [r for r in reused if r.key.case_id not in p0] + fresh
                called += " but the P0 cases, whose runs ran fresh in full"
            return _Baseline(
                nightly.meta,
                reused,
                f"baseline: the stored runs of nightly `{nightly.meta.id}` (main's agent and "
                f"suite unchanged since, same seeds): {called}{checked}",
            )
        if not nightly.refused:
            short = _short_nightly(nightly, sides.identity, agents, cases, repeat, sides.seed)
            self.short_nightly = short or self.short_nightly
        cache = self.out / CACHE_FILE
        if nightly.meta is not None and self.primed is None and not nightly.refused:
            from evals.run.cache import SqliteResponseCache

            # After drift only the guard's fresh runs answer: the nightly's are not used;
            # the P0 cases are answered only from their fresh runs.
            stored = [r for r in nightly.records if r.key.case_id not in p0]
            fresh = self.guard_runs if drifted else stored
            primed = [*fresh, *self.p0_runs.values()]
            responses = SqliteResponseCache(cache)
            try:
                self.primed = responses.prime(primed, nightly.meta.agent_fingerprints)
            finally:
                responses.close()
        base_id = f"{sides.head_id}-base"
        _run_base(
            sides.base_suite,
            sides.base_root,
            sides.environment,
            self.scratch,
            cache,
            base_id,
            agents,
            cases,
            repeat,
            sides.seed,
            self.options,
            _stored(self.scratch, base_id),
            look,
        )
        meta, records = _load(self.scratch, base_id)
        from evals.run.cache import cache_hits, describe_hits

        if nightly.refused:
            source = f"fresh, without the nightly's stored runs or responses ({nightly.refused})"
        elif drifted and guard is not None:
            source = (
                f"primed with the drift guard's {self.primed} fresh response(s): "
                + guard.describe()
            )
        elif nightly.meta is not None:
            source = f"primed with {self.primed} stored response(s) of nightly `{nightly.meta.id}`"
            source += f"; {guard.describe()}" if guard is not None else ""
        else:
            source = f"no stored nightly to prime the cache ({nightly.note})"
        return _Baseline(
            meta,
            records,
            f"baseline: main's agent run in this job, {source}; "
            + describe_hits(cache_hits(records)),
            ran=True,
        )

    def _new_suite(self, head_id: str) -> CiOutcome:
        """No suite (or no agent) at the base: the pull request is gated on its own gates."""
        result = run_evaluation(
            self.head,
            RunOptions(
                environment="pr",
                store_url=self.scratch,
                progress=False,
                evaluation_id=head_id,
                branch=self.context.branch,
                concurrency=self.options.concurrency,
                timeout_s=self.options.timeout_s,
                repeat=self.options.repeat,
            ),
        )
        self.notes.append(
            "the suite or its agents are new in this pull request: nothing at the base to "
            "compare with, so the suite's own pull-request gates decide"
        )
        return self._outcome([result], f"`{self.head.suite_id}` gated on its own gates")

    def _outcome(self, results: list[EvaluationResult], title: str) -> CiOutcome:
        verdict = overall_verdict(results)
        note = undetermined_note(results)
        if note:
            self.key_notes.append(note)
        if self.short_nightly:
            self.notes.append(self.short_nightly)
        differences = self.differences
        now = time.time()
        outcome = CiOutcome(
            kind="pr",
            suite_id=self.head.suite_id,
            verdict=verdict,
            exit_code=exit_code(results),
            results=results,
            notes=[*self.key_notes, *self.notes],
            title=title,
            report_url=self.options.report_url or self.context.run_url,
            run_url=self.context.run_url,
            key_notes=list(self.key_notes),
            base_agent_fingerprints=dict(self.base_fingerprints),
            added_cases=[c for c in differences.added if c in self.cases] if differences else [],
            changed_cases=[c for c in differences.changed if c in self.cases]
            if differences
            else [],
            case_triage=_case_triage(self.store, self.head, now),
            decided_at=now,
        )
        write_outputs(outcome, self.out, names=[_slug(r.meta.agents[-1]) for r in results])
        return outcome


def _refuse_notices(suite: Suite) -> None:
    """Refuse a pull request whose suite has problems `evals run` would turn into error
    rows (an agent that does not import, a missing assertion file): every run of it would
    error, which measures the breakage, not the change; the job says what to fix
    (exit 2), as `evals validate` does."""
    if suite.notices:
        shown = "; ".join(notice.splitlines()[0] for notice in suite.notices[:3])
        more = f" (and {len(suite.notices) - 3} more)" if len(suite.notices) > 3 else ""
        raise SuiteError(
            f"the pull request's suite has {len(suite.notices)} problem(s): {shown}{more}",
            file=str(suite.path),
            fix="`evals validate` on the suite names each one; fix them and push",
        )


def _load_head(path: Path) -> Suite:
    from evals.suite import load_suite

    return load_suite(path)


def run_pull_request(options: PrOptions, context: CiContext | None = None) -> CiOutcome:
    """Do the pull-request job: baseline, candidate, comparison, gates, summary, comment.

    Writes into `options.out`: `summary.md` (also appended to $GITHUB_STEP_SUMMARY),
    `comment.md`, `ci.json`, per compared agent `<agent>.html`, `.junit.xml` and `.json`,
    and the scratch store `pr.db`, which a new job starts afresh and `options.resume`
    keeps. Refuses a baseline store that is the scratch store. A job stopped by an error
    writes a summary, comment and `ci.json` saying what went wrong and what to do, then
    raises it (exit 2 or 3).
    """
    context = context or ci_context()
    try:
        return _pull_request_job(options, context)
    except Exception as error:
        outcome = error_outcome("pr", str(options.suite), error, context.run_url)
        write_outputs(outcome, options.out, names=[])
        raise


def _pull_request_job(options: PrOptions, context: CiContext) -> CiOutcome:
    if options.adaptive is not None and (
        options.stages is not None or options.repeat is not None or options.effect is not None
    ):
        raise SuiteError(
            "--adaptive sets the repeats of each look itself",
            fix="drop --repeat, --effect and --until-decided, or drop --adaptive",
        )
    if options.stages is not None and (options.repeat is not None or options.effect is not None):
        raise SuiteError(
            "--until-decided sets the repeats of each stage itself",
            fix="drop --repeat and --effect, or drop --until-decided",
        )
    if options.repeat is not None and options.effect is not None:
        raise SuiteError(
            "--repeat fixes the repeats and --effect asks the power plan for them",
            fix="give one of them",
        )
    options.out.mkdir(parents=True, exist_ok=True)
    scratch = (options.out / SCRATCH_STORE).resolve()
    if options.store and "://" not in options.store and Path(options.store).resolve() == scratch:
        raise SuiteError(
            "the baseline store is the job's scratch store",
            fix="pass the team's store (read-only) or the nightly's store artifact to --store",
        )
    if not options.resume:
        for stale in (SCRATCH_STORE, CACHE_FILE):
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    (options.out / f"{stale}{suffix}").unlink()
    if os.environ.get("EVALS_STORE_URL"):
        print(
            "warning: EVALS_STORE_URL is set in a pull-request job; evals ci pr does not use "
            "it, and the job should not hold the store's write credentials",
            file=sys.stderr,
        )
    return _PullRequest(options, context).run()
