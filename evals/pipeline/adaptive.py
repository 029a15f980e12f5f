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
from typing import TYPE_CHECKING

from evals.gates.adaptive import AdaptiveState, Futility, advance
from evals.gates.decide import planned_test_split
from evals.model.errors import SuiteError
from evals.model.summary import AdaptiveGateRecord, AdaptiveLookRecord, AdaptiveSummary
from evals.plan.runs import build_plan, select_cases
from evals.stats import sequential_levels, spending_shares

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from evals.model.evaluation import EvaluationResult
    from evals.model.options import RunOptions
    from evals.model.plan import PlannedRun
    from evals.model.results import RunRecord
    from evals.model.suite import Suite

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


@dataclass(slots=True)
class AdaptiveResult:
    """An adaptive run: the final evaluation, every look, the state and the fixed design's
    run count."""

    result: EvaluationResult
    design: AdaptiveDesign
    looks: list[AdaptiveLook]
    state: AdaptiveState
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

    def summary(self) -> AdaptiveSummary:
        """What the run did, as its evaluation stores it with the gates."""
        decided = sorted(self.state.decided.items(), key=lambda item: item[1].look)
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

    def describe(self) -> str:
        """The looks, why it stopped, the gates with their deciding look, the runs saved."""
        return self.summary().describe()


def _runs_so_far(records: list[RunRecord], repeats: int) -> tuple[int, float]:
    looked = [r for r in records if r.key.repeat < repeats]
    return len(looked), sum(r.cost for r in looked)


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


def run_adaptive(suite: Suite, options: RunOptions, design: AdaptiveDesign) -> AdaptiveResult:
    """Run `suite` look by look until its verdict is decided, the last look, or a cap.

    One evaluation in the store; each run records its look in its metadata
    (`run_metadata.look`). With `options.resume` the stored runs are reused and, since a
    look reads only the repeats up to it, every look makes the choices it made before.
    """
    from evals.pipeline.evaluation import run_evaluation, store_gates

    if options.repeat is not None:
        raise SuiteError(
            "an adaptive run sets the repeats of each look itself",
            fix="drop --repeat; give the most repeats per case with --adaptive N",
        )
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
    state = AdaptiveState(active=frozenset(c.id for c in cases))
    result: EvaluationResult | None = None
    looks: list[AdaptiveLook] = []
    previous_repeats = 0
    stop = f"the last look ({design.last} repeats) was reached"
    for number, (repeats, spend) in enumerate(zip(design.looks(), spends, strict=True), start=1):
        next_runs = sum(1 for run in plan(repeats, previous_repeats) if run.case.id in state.active)
        records = result.records if result is not None else []
        over = _over_budget(design, *_runs_so_far(records, previous_repeats), next_runs)
        if over is not None:
            stop = over
            break
        futility = design.futility_at(number, spends)
        futile = futility.judge if futility is not None else None
        look_options = replace(
            options,
            repeat=repeats,
            spend=spend,
            look=number,
            active_cases=state.active,
            frozen_gates=state.frozen(),
            futile=futile,
        )
        result = run_evaluation(suite, look_options, previous=result)
        runs = _runs_so_far(result.records, repeats)[0]
        before = set(state.decided)
        state = advance(state, result.gates, cases, number, futile)
        looks.append(
            AdaptiveLook(
                look=number,
                repeats=repeats,
                spend=spend,
                cases=len(look_options.active_cases or ()),
                runs=runs,
                verdict=result.gates.verdict,
                decided=tuple(sorted(set(state.decided) - before)),
            )
        )
        previous_repeats = repeats
        if result.gates.verdict != "undetermined":
            failed = [g.name for g in result.gates.gates if g.blocking and g.status == "fail"]
            stop = (
                f"blocking gate(s) {', '.join(failed)} failed"
                if failed
                else "every blocking gate passed"
            )
            break
        if not state.active:
            stop = "no undetermined gate can still be decided by the last look"
            break
    if result is None:
        raise SuiteError(
            f"the first look alone needs more runs than the budget allows ({stop})",
            fix="raise --budget-runs or --budget-cost, or lower the first look's repeats",
        )
    adaptive = AdaptiveResult(result, design, looks, state, fixed_runs, stop)
    result.gates = replace(result.gates, adaptive=adaptive.summary())
    store_gates(options, result)
    return adaptive
