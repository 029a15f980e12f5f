"""Run a suite adaptively: look after every batch of repeats, run only what can still decide.

A fixed design runs every case k times whatever the data say; a staged run adds whole
stages for every case. An adaptive run looks at the data after each batch of repeats
(`AdaptiveDesign.looks`: the first look after `first` repeats, then every `every`
repeats up to `last`), decides the gates, and

- stops once the build's verdict is decided (a blocking gate failed, or every one passed);
- keeps each gate decided at a look (pass or fail) decided, with the look and the runs
  that decided it (`evals.gates.adaptive`);
- gives the next batch only to the cases read by a gate still undetermined, so no run
  goes to a case already decided for every gate that reads it;
- stops running for a gate that cannot be decided by the last look even if the data
  move favourably (`evals.stats.futile`: non-binding futility, which can only lower the
  chance of a false failure), keeping it undetermined;
- never starts a look that would take the runs past `budget_runs`, or the cost (the mean
  cost per run so far times the look's runs) past `budget_cost`.

Each look spends the increment of the alpha-spending function alpha·t^rho at t = repeats
over `last` (`evals.stats.spending_shares`; rho = 3 is close to O'Brien-Fleming's
boundaries, spending little on the early looks), split among the gates as a single
decision would, on both the fail and the pass side. By the union bound over looks and
gates a false failure stays within alpha whatever the correlation between looks. Every
choice is a function of the design, the seeds and the records of the earlier looks
(a look reads only the repeats run up to it), so a resumed run makes the same choices.
docs/statistics.md describes the method and shows the simulation.

The loop (`run_looks`) drives any `LookRunner`: one evaluation (`run_adaptive`), one
shard of it deciding on every shard's runs in a shared store, or the pull-request job's
comparison of main's agents with the pull request's (`evals.ci.pr`), where each
compared agent is an arm with its own decided gates and open cases.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from evals.gates.adaptive import AdaptiveState, Futility, Judge, advance, settle
from evals.gates.catalog import planned_test_split
from evals.model.errors import HarnessFault, SuiteError
from evals.model.summary import AdaptiveGateRecord, AdaptiveLookRecord, AdaptiveSummary
from evals.plan.runs import build_plan, select_cases
from evals.stats import sequential_levels, spending_shares

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from evals.model.evaluation import EvaluationResult
    from evals.model.gates import GateConfig
    from evals.model.options import EvaluationState, RunOptions
    from evals.model.plan import PlannedRun
    from evals.model.results import RunRecord
    from evals.model.suite import Case, Suite
    from evals.model.summary import GateReport, GateResult, Summary
    from evals.store import Store

DEFAULT_RHO = 3.0
# How often a shard of an adaptive run looks for the other shards' runs, in seconds.
SHARD_POLL_S = 0.25
DEFAULT_REACH = 2.0


@dataclass(frozen=True, slots=True)
class AdaptiveDesign:
    """The looks of an adaptive run and its hard caps.

    Looks after `first` repeats per case and agent, then every `every` repeats, up to
    `last` (the fixed design it replaces runs `last` repeats). `rho` shapes the spending
    function alpha·t^rho. `futility` is how many conditional standard deviations an
    undetermined gate's estimate may need to move to be decided by the last look before
    its cases stop for it (None: never), and `pass_futility` the same for reaching a pass
    (None: `futility`); `fail_only` judges the fail side alone (where an undetermined
    verdict passes, a pass changes nothing). `budget_runs` and `budget_cost` cap the runs
    and the cost.
    """

    last: int = 10
    first: int = 2
    every: int = 2
    rho: float = DEFAULT_RHO
    futility: float | None = DEFAULT_REACH
    pass_futility: float | None = None
    budget_runs: int | None = None
    budget_cost: float | None = None
    fail_only: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.first <= self.last or self.every < 1:
            raise ValueError(
                "an adaptive design needs 1 <= first look <= last repeats and a step of at "
                f"least 1 (got first {self.first}, every {self.every}, last {self.last})"
            )
        if self.pass_futility is not None and self.pass_futility < 0:
            raise ValueError(
                f"the pass side's futility reach must be at least 0, got {self.pass_futility}"
            )
        if self.rho <= 0:
            raise ValueError(f"rho must be positive, got {self.rho}")
        if self.budget_runs is not None and self.budget_runs < 1:
            raise ValueError(f"--budget-runs must be at least 1, got {self.budget_runs}")
        if self.budget_cost is not None and self.budget_cost <= 0:
            raise ValueError(f"--budget-cost must be positive, got {self.budget_cost}")

    def looks(self) -> tuple[int, ...]:
        """Cumulative repeats per case and agent at each look, ending at `last`."""
        return (*range(self.first, self.last, self.every), self.last)

    def spends(self, confidence: float, split: int = 2) -> list[float]:
        """Each look's budget, to be split among at most `split` one-sided tests.

        The finest test's share of the budget 1 - confidence is spent in increments of
        alpha·t^rho; each look's nominal level for it is the exact group-sequential level
        of that spending (`evals.stats.sequential_levels`: the chance of first crossing at
        the look equals its increment under the canonical joint distribution), and the
        look's budget is that level times `split`. For a coarser test (a larger share) the
        same budget is conservative, since the gain of the exact levels over the spends
        grows with the error spent (docs/statistics.md).
        """
        if split < 2:
            raise ValueError(f"split must be at least 2 (the pass side halves), got {split}")
        fractions = [k / self.last for k in self.looks()]
        finest = spending_shares(fractions, (1 - confidence) / split, self.rho)
        return [level * split for level in sequential_levels(fractions, finest)]

    def futility_at(self, look: int, spends: Sequence[float]) -> Futility | None:
        """How look `look` (1-based) of a run with budgets `spends` (one per look, e.g.
        `spends`) judges whether a gate can still be decided; None at the last look or
        without futility."""
        looks = self.looks()
        if self.futility is None or look >= len(looks):
            return None
        return Futility(
            fraction=looks[look - 1] / self.last,
            spend_ratio=spends[-1] / spends[look - 1],
            final_spend=spends[-1],
            reach=self.futility,
            pass_reach=self.pass_futility,
            fail_only=self.fail_only,
        )


def design_for(
    config: GateConfig,
    last: int,
    every: int = 2,
    pass_reach: float | None = None,
    budget_runs: int | None = None,
    budget_cost: float | None = None,
) -> AdaptiveDesign:
    """The design `--adaptive LAST --look-every EVERY` asks for: the first look after
    EVERY repeats (at most LAST), the caps the flags give, else those of the environment's
    gate configuration `config` (`gates.budget_runs`, `gates.budget_cost`). Where an
    undetermined verdict passes (a pull request), only failing can change the build, so
    the pass side is not judged unless `--pass-reach` says otherwise: a gate stops as soon
    as it cannot fail by the last look. An impossible design is a `SuiteError` naming the
    flags."""
    fail_only = pass_reach is None and config.on_undetermined == "pass"
    if fail_only:
        pass_reach = 0.0
    try:
        return AdaptiveDesign(
            last=last,
            first=min(every, last),
            every=every,
            pass_futility=pass_reach,
            fail_only=fail_only,
            budget_runs=budget_runs if budget_runs is not None else config.budget_runs,
            budget_cost=budget_cost if budget_cost is not None else config.budget_cost,
        )
    except ValueError as exc:
        raise SuiteError(
            str(exc), fix="check --adaptive, --look-every, --pass-reach and the budgets"
        ) from None


@dataclass(frozen=True, slots=True)
class AdaptiveLook:
    """One look: repeats per case so far, its spend, the cases that ran in it, the runs
    so far, the verdict, and the gates it decided."""

    look: int
    repeats: int
    spend: float
    cases: int
    runs: int
    verdict: str
    decided: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LookRequest:
    """What one look asks of its runner: the look's number, the cumulative repeats per
    case it reaches from `previous`, its spend, and per arm (an evaluation's gates, or one
    compared agent's) the cases still open, the gates decided before (`frozen`) and the
    futility judge of the look (None: never futile)."""

    number: int
    repeats: int
    previous: int
    spend: float
    active: tuple[frozenset[str], ...]
    frozen: tuple[dict[str, GateResult], ...]
    futile: Judge | None

    @property
    def cases(self) -> frozenset[str]:
        """The cases any arm still needs runs of."""
        return frozenset().union(*self.active)


class LookRunner(Protocol):
    """What an adaptive run does at each look, for one evaluation or a comparison.

    `planned` counts the runs a look from `previous` to `repeats` repeats would make for
    the open cases of each arm; `spent` the runs and cost made below `repeats` repeats;
    `look` runs a look and returns each arm's gate report as `evals.gates.adaptive.settle`
    states it (decided gates kept, new decisions stamped with the look).
    """

    def planned(self, repeats: int, previous: int, active: Sequence[frozenset[str]]) -> int:
        """Runs the look would make."""
        ...

    def spent(self, repeats: int) -> tuple[int, float | None]:
        """Runs and their cost below `repeats` repeats per case (None: partly unknown)."""
        ...

    def look(self, request: LookRequest) -> list[GateReport]:
        """Run the look; each arm's settled gate report."""
        ...


def combined_verdict(reports: Sequence[GateReport]) -> str:
    """fail if any arm failed, else undetermined if any is, else pass."""
    verdicts = {report.verdict for report in reports}
    return next((v for v in ("fail", "undetermined") if v in verdicts), "pass")


@dataclass(slots=True)
class AdaptiveRun:
    """The looks of an adaptive run, each arm's state, why it stopped, and the runs a fixed
    design of `design.last` repeats would have made."""

    design: AdaptiveDesign
    looks: list[AdaptiveLook]
    states: list[AdaptiveState]
    fixed_runs: int
    stop_reason: str

    @property
    def runs(self) -> int:
        """The runs the adaptive run made."""
        return self.looks[-1].runs if self.looks else 0

    @property
    def saved(self) -> int:
        """Runs saved against the fixed design of `design.last` repeats for every case."""
        return self.fixed_runs - self.runs

    def summary(self, arm: int = 0) -> AdaptiveSummary:
        """What the run did for arm `arm`, as its evaluation stores it with the gates."""
        decided = sorted(self.states[arm].decided.items(), key=lambda item: item[1].look)
        return AdaptiveSummary(
            looks=[
                AdaptiveLookRecord(look.look, look.repeats, look.cases, look.runs, look.verdict)
                for look in self.looks
            ],
            decided=[
                AdaptiveGateRecord(name, d.result.status, d.look, self.looks[d.look - 1].runs)
                for name, d in decided
            ],
            stop_reason=self.stop_reason,
            last=self.design.last,
            runs=self.runs,
            fixed_runs=self.fixed_runs,
        )


@dataclass(slots=True)
class AdaptiveResult(AdaptiveRun):
    """An adaptive run of one evaluation: its looks and the final evaluation."""

    result: EvaluationResult

    @classmethod
    def of(cls, run: AdaptiveRun, result: EvaluationResult) -> AdaptiveResult:
        """`run`, ending with the evaluation `result`."""
        return cls(run.design, run.looks, run.states, run.fixed_runs, run.stop_reason, result)

    @property
    def state(self) -> AdaptiveState:
        """The decided gates and the cases still open after the last look."""
        return self.states[0]

    def describe(self) -> str:
        """The looks, why it stopped, the gates with their deciding look, the runs saved."""
        return self.summary().describe()


def _over_budget(
    design: AdaptiveDesign, runs: int, cost: float | None, next_runs: int
) -> str | None:
    if design.budget_runs is not None and runs + next_runs > design.budget_runs:
        return (
            f"the next look's {next_runs} runs would take the {runs} runs so far past "
            f"--budget-runs {design.budget_runs}"
        )
    if design.budget_cost is not None and runs and cost is None:
        return (
            f"the cost of the runs so far is unknown (a model without a price), so "
            f"--budget-cost {design.budget_cost:.4g} cannot be kept: add the model to the "
            "suite's prices:"
        )
    if design.budget_cost is not None and runs and cost is not None:
        projected = cost + next_runs * cost / runs
        if projected > design.budget_cost:
            return (
                f"the next look's {next_runs} runs would take the cost {cost:.4g} so far to "
                f"about {projected:.4g}, past --budget-cost {design.budget_cost:.4g}"
            )
    return None


def _stopped(reports: Sequence[GateReport], labels: Sequence[str]) -> str:
    """Why a run whose every arm is decided stopped; with several arms, each failed gate
    names its arm (`labels`)."""
    failed = sorted(
        {
            f"{g.name} ({label})" if len(reports) > 1 else g.name
            for report, label in zip(reports, labels, strict=True)
            for g in report.gates
            if g.blocking and g.status == "fail"
        }
    )
    if failed:
        return f"blocking gate(s) {', '.join(failed)} failed"
    return "every blocking gate passed"


def run_looks(
    design: AdaptiveDesign,
    runner: LookRunner,
    cases: Sequence[Case],
    spends: Sequence[float],
    fixed_runs: int,
    arms: Sequence[str] = ("",),
) -> AdaptiveRun:
    """Look after every batch of `design` until every arm's verdict is decided, the last
    look, a cap, or no open gate can still be decided.

    `arms` names the arms (one per gate report the runner returns, e.g. the compared
    agents); each keeps its own decided gates and open cases
    (`evals.gates.adaptive.advance`), and an arm whose verdict is decided gets no further
    runs. Every choice is a function of
    the design, `spends` (one per look) and what `runner` reports, so a runner that reads
    only the repeats up to each look makes a resumed run repeat its choices.
    """
    everything = frozenset(c.id for c in cases)
    states = [AdaptiveState(active=everything) for _ in arms]
    looks: list[AdaptiveLook] = []
    previous = 0
    stop = f"the last look ({design.last} repeats) was reached"
    for number, (repeats, spend) in enumerate(zip(design.looks(), spends, strict=True), start=1):
        active = tuple(state.active for state in states)
        over = _over_budget(
            design, *runner.spent(previous), runner.planned(repeats, previous, active)
        )
        if over is not None:
            stop = over
            break
        futility = design.futility_at(number, spends)
        futile = futility.judge if futility is not None else None
        request = LookRequest(
            number, repeats, previous, spend, active, tuple(s.frozen() for s in states), futile
        )
        reports = runner.look(request)
        before = [set(state.decided) for state in states]
        states = [
            _advanced(state, report, cases, number, futile)
            for state, report in zip(states, reports, strict=True)
        ]
        looks.append(
            AdaptiveLook(
                look=number,
                repeats=repeats,
                spend=spend,
                cases=len(request.cases),
                runs=runner.spent(repeats)[0],
                verdict=combined_verdict(reports),
                decided=tuple(
                    sorted(
                        n
                        for state, b in zip(states, before, strict=True)
                        for n in set(state.decided) - b
                    )
                ),
            )
        )
        previous = repeats
        if all(report.verdict != "undetermined" for report in reports):
            stop = _stopped(reports, arms)
            break
        if not any(state.active for state in states):
            stop = "no undetermined gate can still be decided by the last look"
            break
    if not looks:
        raise SuiteError(
            f"the first look alone needs more runs than the budget allows ({stop})",
            fix="raise --budget-runs or --budget-cost, or lower the first look's repeats",
        )
    return AdaptiveRun(design, looks, states, fixed_runs, stop)


def _advanced(
    state: AdaptiveState,
    report: GateReport,
    cases: Sequence[Case],
    look: int,
    futile: Judge | None,
) -> AdaptiveState:
    """`advance`, for an arm still open; an arm whose verdict is decided runs no more."""
    if not state.active:
        return state
    advanced = advance(state, report, cases, look, futile)
    if report.verdict != "undetermined":
        return AdaptiveState(advanced.decided, frozenset())
    return advanced


def _look_options(options: RunOptions, request: LookRequest, **changes: Any) -> RunOptions:
    """`options` for one look of a single arm: its repeats (and `changes`)."""
    return replace(options, repeat=request.repeats, **changes)


def _look_state(state: EvaluationState, request: LookRequest) -> EvaluationState:
    """Where one look of a single arm stands: its spend and number, the open cases, the
    gates decided before and the futility judge."""
    return replace(
        state,
        spend=request.spend,
        look=request.number,
        active_cases=request.active[0],
        frozen_gates=request.frozen[0],
        futile=request.futile,
    )


@dataclass(slots=True)
class _EvaluationLooks:
    """The looks of one evaluation: each adds its repeats to the same evaluation."""

    suite: Suite
    options: RunOptions
    state: EvaluationState
    plan: Callable[[int, int], Iterator[PlannedRun]]
    result: EvaluationResult | None = None

    def planned(self, repeats: int, previous: int, active: Sequence[frozenset[str]]) -> int:
        return sum(1 for run in self.plan(repeats, previous) if run.case.id in active[0])

    def spent(self, repeats: int) -> tuple[int, float | None]:
        records = self.result.records if self.result is not None else []
        return runs_below(records, repeats)

    def look(self, request: LookRequest) -> list[GateReport]:
        from evals.pipeline.evaluation import run_evaluation

        look_options = _look_options(self.options, request)
        look_state = _look_state(self.state, request)
        self.result = run_evaluation(self.suite, look_options, self.result, look_state)
        return [self.result.gates]


def runs_below(records: Sequence[RunRecord], repeats: int) -> tuple[int, float | None]:
    """How many of `records` have a repeat below `repeats`, and their cost: what a look
    after `repeats` repeats has spent (a resumed run's later runs are not counted). The
    cost is None when an answered run's cost is unknown (a model without a price)."""
    looked = [r for r in records if r.key.repeat < repeats]
    if any(r.cost_unknown is not None for r in looked):
        return len(looked), None
    return len(looked), sum(r.cost or 0.0 for r in looked)


def refuse_fixed_repeats(options: RunOptions) -> None:
    """An adaptive run sets each look's repeats: a fixed --repeat is refused."""
    if options.repeat is not None:
        raise SuiteError(
            "an adaptive run sets the repeats of each look itself",
            fix="drop --repeat; give the most repeats per case with --adaptive N",
        )


def shard_evaluation_id(evaluation_id: str, shard: tuple[int, int]) -> str:
    """The id under which shard `shard` of a sharded adaptive run stores its runs."""
    return f"{evaluation_id}-shard-{shard[0]}-of-{shard[1]}"


def _refuse_unshareable(options: RunOptions) -> str:
    """The evaluation id a sharded adaptive run's shards share; refuses what they cannot."""
    if options.resume:
        raise SuiteError(
            "a shard of an adaptive run resumes by itself: started again with the same "
            "--evaluation-id, it goes on with the runs its evaluation stored",
            fix="drop --resume and give the same --evaluation-id",
        )
    if not options.evaluation_id or not options.use_store:
        raise SuiteError(
            "the shards of an adaptive run decide every look on all shards' runs, which they "
            "read from one shared store under one evaluation id",
            fix="give every shard the same --evaluation-id and --store (an SQLite file they "
            "all reach, or PostgreSQL)",
        )
    longest = shard_evaluation_id(options.evaluation_id, options.shard or (1, 1))
    if len(longest) > 64:
        raise SuiteError(
            f"--evaluation-id {options.evaluation_id}: a shard stores its runs as {longest}, "
            "longer than the 64 characters an evaluation id may have",
            fix="choose a shorter --evaluation-id",
        )
    return options.evaluation_id


@dataclass(slots=True)
class _ShardedLooks:
    """The looks of one shard of an adaptive run through a shared store.

    Each look runs this shard's part of the look's runs (`build_plan`'s `shard`, cut from
    the whole plan) into the shard's own evaluation, waits until every shard's evaluation
    holds its part of every look so far, and decides on the union of the runs below the
    look's repeats exactly as the unsharded run does, so every shard makes the same
    choices. A restarted shard resumes its evaluation and catches up.
    """

    suite: Suite
    options: RunOptions
    state: EvaluationState
    plan: Callable[..., Iterator[PlannedRun]]
    evaluation_id: str
    wait_s: float
    own: EvaluationResult | None = None
    records: list[RunRecord] = field(default_factory=list)
    expected: dict[int, set[tuple[str, str, str, int]]] = field(default_factory=dict)
    summary: Summary | None = None
    gates: GateReport | None = None
    opened: Store | None = None

    @property
    def store(self) -> Store:
        """The shared store, opened once for the run's looks (`close` closes it)."""
        if self.opened is None:
            from evals.store import open_store

            self.opened = open_store(self.options.store_url)
        return self.opened

    def close(self) -> None:
        """Close the shared store, if a look opened it."""
        if self.opened is not None:
            self.opened.close()
            self.opened = None

    @property
    def shard(self) -> tuple[int, int]:
        assert self.options.shard is not None
        return self.options.shard

    def planned(self, repeats: int, previous: int, active: Sequence[frozenset[str]]) -> int:
        return sum(1 for run in self.plan(repeats, previous) if run.case.id in active[0])

    def spent(self, repeats: int) -> tuple[int, float | None]:
        return runs_below(self.records, repeats)

    def look(self, request: LookRequest) -> list[GateReport]:
        from evals.pipeline.evaluation import analyse, run_evaluation, suite_judge

        own_id = shard_evaluation_id(self.evaluation_id, self.shard)
        held = self.own is None and self.store.get_evaluation(own_id) is not None
        resume = own_id if held else None
        look_options = _look_options(self.options, request, evaluation_id=own_id, resume=resume)
        look_state = _look_state(self.state, request)
        self.own = run_evaluation(self.suite, look_options, self.own, look_state)
        for index in range(1, self.shard[1] + 1):
            self.expected.setdefault(index, set()).update(
                run.key.as_tuple()
                for run in self.plan(request.repeats, request.previous, (index, self.shard[1]))
                if run.case.id in request.active[0]
            )
        self.records = self._gathered(request)
        config = self.suite.gates.for_environment(self.options.environment)
        now = time.time()
        self.summary, gates = analyse(
            self.suite,
            self.records,
            config,
            self.options.environment,
            suite_judge(self.suite, self.options, config),
            request.spend,
            self.store.triage.quarantines(self.suite.suite_id, now=now),
            now,
        )
        looked = len(self.records)
        self.gates = settle(
            gates, request.frozen[0], request.number, request.repeats, looked, request.futile
        )
        return [self.gates]

    def _gathered(self, request: LookRequest) -> list[RunRecord]:
        """Every shard's runs of the looks so far, once all are stored (waiting up to
        `wait_s` seconds for the other shards): the runs gathered at earlier looks and
        this look's new repeats."""
        count = self.shard[1]
        store = self.store
        ids = {
            index: shard_evaluation_id(self.evaluation_id, (index, count))
            for index in self.expected
        }
        deadline = time.monotonic() + self.wait_s
        while True:
            lacking = {
                index: len(self.expected[index] - store.completed_keys(ids[index])) for index in ids
            }
            if not any(lacking.values()):
                wanted = set().union(*self.expected.values())
                return self.records + [
                    record
                    for index in sorted(ids)
                    for repeat in range(request.previous, request.repeats)
                    for record in store.load_runs(ids[index], repeat=repeat)
                    if record.key.as_tuple() in wanted
                ]
            if time.monotonic() >= deadline:
                break
            time.sleep(SHARD_POLL_S)
        missing = ", ".join(
            f"shard {index}/{count} ({ids[index]}) lacks {n} of its "
            f"{len(self.expected[index])} runs"
            for index, n in sorted(lacking.items())
            if n
        )
        raise HarnessFault(
            f"look {request.number} of adaptive run {self.evaluation_id} waited "
            f"{self.wait_s:g} s for the other shards' runs: {missing}; start (or restart) the "
            "missing shards with the same --evaluation-id and --store, or give them longer "
            "with --shard-wait"
        )


def _merged(
    suite: Suite, options: RunOptions, sharded: _ShardedLooks, run: AdaptiveRun, shared: str
) -> AdaptiveResult:
    """A sharded run as the unsharded run ends: every shard's runs under the shared id, with
    the last look's gates and the run's summary; shard 1 stores it in the shared store."""
    from evals.model.evaluation import EvaluationResult
    from evals.pipeline.evaluation import new_meta
    from evals.pipeline.merge import store_merged

    assert sharded.summary is not None and sharded.gates is not None and options.shard
    repeat = run.looks[-1].repeats
    meta = new_meta(suite, replace(options, shard=None, evaluation_id=shared), repeat)
    meta.planned_runs = meta.stored_runs = len(sharded.records)
    meta.status, meta.ended_at = "complete", time.time()
    gates = replace(sharded.gates, adaptive=run.summary())
    config = suite.gates.for_environment(options.environment)
    result = EvaluationResult(suite, meta, sharded.records, sharded.summary, gates, config, repeat)
    if options.shard[0] == 1:
        store_merged(result, options.store_url)
    return AdaptiveResult.of(run, result)


def run_adaptive(
    suite: Suite,
    options: RunOptions,
    design: AdaptiveDesign,
    shard_wait: float = 600.0,
    state: EvaluationState | None = None,
) -> AdaptiveResult:
    """Run `suite` look by look until its verdict is decided, the last look, or a cap.

    One evaluation in the store; each run records its look in its metadata
    (`run_metadata.look`). With `options.resume` the stored runs are reused and, since a
    look reads only the repeats up to it, every look makes the choices it made before.

    With `options.shard` (i, n), this process is shard i of n sharing `options.store_url`
    and `options.evaluation_id` with the others: it stores its runs as
    `shard_evaluation_id`, decides each look on every shard's runs (waiting up to
    `shard_wait` seconds for them) and so makes the unsharded run's choices; shard 1 stores
    the merged evaluation under the shared id, with the unsharded run's runs and gates.
    `state` is where the run starts (a stored baseline standing in, its allocation); each
    look adds its own spend, number, open cases and decided gates to it.
    """
    from evals.model.options import EvaluationState
    from evals.pipeline.evaluation import store_gates

    start = EvaluationState() if state is None else state
    refuse_fixed_repeats(options)
    gate_config = suite.gates.for_environment(options.environment)
    tags = options.chosen_tags(gate_config.tags)
    cases = select_cases(suite.cases, tags, options.case_ids)

    def plan(
        repeats: int, start: int = 0, shard: tuple[int, int] | None = None
    ) -> Iterator[PlannedRun]:
        return build_plan(
            suite,
            repeats,
            tags=tags,
            case_ids=options.case_ids,
            agents=options.agents,
            shard=shard,
            repeat_start=start,
            salt=options.seed,
        )

    fixed_runs = sum(1 for _ in plan(design.last))
    spends = design.spends(gate_config.confidence, planned_test_split(suite, options.environment))
    if options.shard is not None:
        shared = _refuse_unshareable(options)
        sharded = _ShardedLooks(suite, options, start, plan, shared, shard_wait)
        try:
            run = run_looks(design, sharded, cases, spends, fixed_runs)
        finally:
            sharded.close()
        return _merged(suite, options, sharded, run, shared)
    runner = _EvaluationLooks(suite, options, start, plan)
    run = run_looks(design, runner, cases, spends, fixed_runs)
    result = runner.result
    assert result is not None
    adaptive = AdaptiveResult.of(run, result)
    result.gates = replace(result.gates, adaptive=adaptive.summary())
    store_gates(options, result)
    return adaptive
