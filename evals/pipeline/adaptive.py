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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from evals.gates.adaptive import AdaptiveState, Futility, Judge, advance
from evals.gates.decide import planned_test_split
from evals.model.errors import SuiteError
from evals.model.summary import AdaptiveGateRecord, AdaptiveLookRecord, AdaptiveSummary
from evals.plan.runs import build_plan, select_cases
from evals.stats import sequential_levels, spending_shares

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from evals.model.evaluation import EvaluationResult
    from evals.model.gates import GateConfig
    from evals.model.options import RunOptions
    from evals.model.plan import PlannedRun
    from evals.model.results import RunRecord
    from evals.model.suite import Case, Suite
    from evals.model.summary import GateReport, GateResult

DEFAULT_RHO = 3.0
DEFAULT_REACH = 2.0


@dataclass(frozen=True, slots=True)
class AdaptiveDesign:
    """The looks of an adaptive run and its hard caps.

    Looks after `first` repeats per case and agent, then every `every` repeats, up to
    `last` (the fixed design it replaces runs `last` repeats). `rho` shapes the spending
    function alpha·t^rho. `futility` is how many conditional standard deviations an
    undetermined gate's estimate may need to move to be decided by the last look before
    its cases stop for it (None: never), and `pass_futility` the same for reaching a pass
    (None: `futility`). `budget_runs` and `budget_cost` cap the runs and
    the cost.
    """

    last: int = 10
    first: int = 2
    every: int = 2
    rho: float = DEFAULT_RHO
    futility: float | None = DEFAULT_REACH
    pass_futility: float | None = None
    budget_runs: int | None = None
    budget_cost: float | None = None

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
    gate configuration `config` (`gates.budget_runs`, `gates.budget_cost`). An impossible
    design is a `SuiteError` naming the flags."""
    try:
        return AdaptiveDesign(
            last=last,
            first=min(every, last),
            every=every,
            pass_futility=pass_reach,
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

    def spent(self, repeats: int) -> tuple[int, float]:
        """Runs and their cost below `repeats` repeats per case."""
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
class AdaptiveResult:
    """An adaptive run of one evaluation: the final evaluation and the run's looks."""

    result: EvaluationResult
    run: AdaptiveRun

    @property
    def design(self) -> AdaptiveDesign:
        """The design of looks and caps."""
        return self.run.design

    @property
    def looks(self) -> list[AdaptiveLook]:
        """Every look made."""
        return self.run.looks

    @property
    def state(self) -> AdaptiveState:
        """The decided gates and the cases still open after the last look."""
        return self.run.states[0]

    @property
    def fixed_runs(self) -> int:
        """The runs of the fixed design of `design.last` repeats."""
        return self.run.fixed_runs

    @property
    def stop_reason(self) -> str:
        """Why no further look ran, in words."""
        return self.run.stop_reason

    @property
    def runs(self) -> int:
        """The runs the adaptive run made."""
        return self.run.runs

    @property
    def saved(self) -> int:
        """Runs saved against the fixed design of `design.last` repeats for every case."""
        return self.run.saved

    def summary(self) -> AdaptiveSummary:
        """What the run did, as its evaluation stores it with the gates."""
        return self.run.summary()

    def describe(self) -> str:
        """The looks, why it stopped, the gates with their deciding look, the runs saved."""
        return self.summary().describe()


def _over_budget(design: AdaptiveDesign, runs: int, cost: float, next_runs: int) -> str | None:
    if design.budget_runs is not None and runs + next_runs > design.budget_runs:
        return (
            f"the next look's {next_runs} runs would take the {runs} runs so far past "
            f"--budget-runs {design.budget_runs}"
        )
    if design.budget_cost is not None and runs:
        projected = cost + next_runs * cost / runs
        if projected > design.budget_cost:
            return (
                f"the next look's {next_runs} runs would take the cost {cost:.4g} so far to "
                f"about {projected:.4g}, past --budget-cost {design.budget_cost:.4g}"
            )
    return None


def _stopped(reports: Sequence[GateReport]) -> str:
    failed = sorted(
        {g.name for report in reports for g in report.gates if g.blocking and g.status == "fail"}
    )
    return (
        f"blocking gate(s) {', '.join(failed)} failed" if failed else "every blocking gate passed"
    )


def run_looks(
    design: AdaptiveDesign,
    runner: LookRunner,
    cases: Sequence[Case],
    spends: Sequence[float],
    fixed_runs: int,
    arms: int = 1,
) -> AdaptiveRun:
    """Look after every batch of `design` until every arm's verdict is decided, the last
    look, a cap, or no open gate can still be decided.

    Each arm keeps its own decided gates and open cases (`evals.gates.adaptive.advance`);
    an arm whose verdict is decided gets no further runs. Every choice is a function of
    the design, `spends` (one per look) and what `runner` reports, so a runner that reads
    only the repeats up to each look makes a resumed run repeat its choices.
    """
    everything = frozenset(c.id for c in cases)
    states = [AdaptiveState(active=everything) for _ in range(arms)]
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
            stop = _stopped(reports)
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


@dataclass(slots=True)
class _EvaluationLooks:
    """The looks of one evaluation: each adds its repeats to the same evaluation."""

    suite: Suite
    options: RunOptions
    plan: Callable[[int, int], Iterator[PlannedRun]]
    result: EvaluationResult | None = None

    def planned(self, repeats: int, previous: int, active: Sequence[frozenset[str]]) -> int:
        return sum(1 for run in self.plan(repeats, previous) if run.case.id in active[0])

    def spent(self, repeats: int) -> tuple[int, float]:
        records = self.result.records if self.result is not None else []
        return runs_below(records, repeats)

    def look(self, request: LookRequest) -> list[GateReport]:
        from evals.pipeline.evaluation import run_evaluation

        look_options = replace(
            self.options,
            repeat=request.repeats,
            spend=request.spend,
            look=request.number,
            active_cases=request.active[0],
            frozen_gates=request.frozen[0],
            futile=request.futile,
        )
        self.result = run_evaluation(self.suite, look_options, previous=self.result)
        return [self.result.gates]


def runs_below(records: Sequence[RunRecord], repeats: int) -> tuple[int, float]:
    """How many of `records` have a repeat below `repeats`, and their cost: what a look
    after `repeats` repeats has spent (a resumed run's later runs are not counted)."""
    looked = [r for r in records if r.key.repeat < repeats]
    return len(looked), sum(r.cost for r in looked)


def refuse_fixed_repeats(options: RunOptions) -> None:
    """An adaptive run sets each look's repeats: a fixed --repeat is refused."""
    if options.repeat is not None:
        raise SuiteError(
            "an adaptive run sets the repeats of each look itself",
            fix="drop --repeat; give the most repeats per case with --adaptive N",
        )


def run_adaptive(suite: Suite, options: RunOptions, design: AdaptiveDesign) -> AdaptiveResult:
    """Run `suite` look by look until its verdict is decided, the last look, or a cap.

    One evaluation in the store; each run records its look in its metadata
    (`run_metadata.look`). With `options.resume` the stored runs are reused and, since a
    look reads only the repeats up to it, every look makes the choices it made before.
    """
    from evals.pipeline.evaluation import store_gates

    refuse_fixed_repeats(options)
    if options.shard is not None:
        raise SuiteError(
            "an adaptive run decides each look on the whole suite, so it cannot run one shard",
            fix="drop --shard, or run the shards with a fixed --repeat and merge them",
        )
    gate_config = suite.gates.for_environment(options.environment)
    named = options.tags is not None or bool(options.case_ids)
    tags = options.tags if named else gate_config.tags
    cases = select_cases(suite.cases, tags, options.case_ids)

    def plan(repeats: int, start: int = 0) -> Iterator[PlannedRun]:
        return build_plan(
            suite,
            repeats,
            tags=tags,
            case_ids=options.case_ids,
            agents=options.agents,
            repeat_start=start,
            salt=options.seed,
        )

    fixed_runs = sum(1 for _ in plan(design.last))
    spends = design.spends(gate_config.confidence, planned_test_split(suite, options.environment))
    runner = _EvaluationLooks(suite, options, plan)
    run = run_looks(design, runner, cases, spends, fixed_runs)
    result = runner.result
    assert result is not None
    adaptive = AdaptiveResult(result, run)
    result.gates = replace(result.gates, adaptive=adaptive.summary())
    store_gates(options, result)
    return adaptive
