"""What the gates on these cases promise, by simulation through the product's own code.

    python validation/suite_estimand.py [--runs N] [--seed S] [--rows NAME ...]

Suites of 20 cases drawn from a realistic mix: 60 % of cases near a pass rate of 1
(Beta(30, 1)), 15 % near 0 (Beta(1, 30)), 25 % flaky (uniform on [0.2, 0.8]). The cases
fall in 4 tags (`units` 7 cases, `io` 5, `docs` 4, `net` 4), 4 of them P0 (one per tag).
The gates are the defaults of a pull request (`evals ci pr`'s environment `pr`: a loss is
a failure only when shown, undetermined passes) with a `regression[tag]` gate on every
tag (tolerated loss 0.10): the suite's `regression` (tolerated loss 0), `regression[tag]`,
`p0_regressions`, `error_rate` and `policy`, decided by `evals.pipeline.evaluation.analyse`.
Every row is seeded and prints its Monte Carlo standard error.

Rows:

- `identical`: identical agents at 20 cases × 5 repeats, the whole build's false failures
  and green builds, by design: fixed k = 5 (both agents fresh), staged 3,5,10
  (`--until-decided`), adaptive (`--adaptive 10`, looks every 2 repeats), the baseline
  reused from a stored evaluation of 10 repeats with the drift guard
  (`evals.gates.baseline`), and the same with the fresh baseline 3 points below the stored
  one (one log-odds shift: the world drifted since the baseline was stored);
- `tag`: the tag `units` (7 cases, all near 1: about 97 %) dropping 45 points (to about
  52 %) at 5 repeats, the other tags as they were: the builds failed, and those naming
  `regression[units]`;
- `bound`: the same drop at 5, 6 and 7 repeats, and the most builds any split of the 5 %
  between the suite's row and the tag's row alone could fail (the other gates given
  nothing, the dropping tag known in advance): a ceiling for every budget split;
- `suite`: a 20-point drop of the whole suite at 20 × 3;
- `drops`: 10-, 20- and 30-point drops of the whole suite at 20 × 3;
- `staged`: staged 3, 5, 10 against fixed k = 10, identical agents and a 20-point drop;
- `more`: the reused baseline after a 3-point drift with no budget in reserve, and the
  `tag` row at 12 repeats;
- `calls`: agent calls against power. Fixed k = 5, 7 and 10 with both agents fresh
  against the design that saves calls: the stored baseline (10 repeats) with its drift
  guard, the candidate's repeats allocated from the baseline's history
  (`evals.gates.baseline.allocation`, an average of 10, at most 10) and run in the looks
  of `--adaptive 10`, only the cases of gates that can still fail running on. Rows:
  identical agents, identical agents after a 3-point drift, 6- and 10-point drops.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from beta_binomial import simulated_suite

from evals.analysis import comparison
from evals.gates import baseline
from evals.gates.adaptive import AdaptiveState, advance, settle
from evals.gates.catalog import planned_test_split
from evals.model.gates import GateConfig
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Case, Suite
from evals.model.summary import GateReport
from evals.pipeline.adaptive import AdaptiveDesign
from evals.pipeline.evaluation import analyse
from evals.pipeline.staged import cannot_fail, look_spends

# No gate reads the per-case verdict table (each case's exact test, most of a summary's
# time), so it is left out here.
comparison.case_p_value = lambda candidate, baseline, pair: None  # type: ignore[assignment]

TAGS = ("units",) * 7 + ("io",) * 5 + ("docs",) * 4 + ("net",) * 4
P0 = (0, 7, 12, 16)
ENVIRONMENT = "pr"
STORED_REPEATS = 10


def suite_cases() -> list[Case]:
    """20 cases in the four tags, four of them P0."""
    return [
        Case(
            index=i,
            id=f"c{i}",
            description="",
            vars={},
            asserts=[],
            metadata={"tags": [tag], "priority": "P0" if i in P0 else "P1"},
        )
        for i, tag in enumerate(TAGS)
    ]


def pr_suite() -> Suite:
    """The simulated suite with the pull request's gates."""
    suite = simulated_suite(suite_cases())
    suite.gates = GateConfig(
        baseline="base",
        candidate="cand",
        per_tag={tag: {"max_regression": 0.1} for tag in ("units", "io", "docs", "net")},
    )
    return suite


def realistic_rates(rng: np.random.Generator, cases: int = len(TAGS)) -> np.ndarray:
    """Case rates: 60 % near 1, 15 % near 0, 25 % flaky."""
    kind = rng.choice(3, size=cases, p=[0.6, 0.15, 0.25])
    return np.where(
        kind == 0,
        rng.beta(30, 1, cases),
        np.where(kind == 1, rng.beta(1, 30, cases), rng.uniform(0.2, 0.8, cases)),
    )


def shifted(rates: np.ndarray, drop: float) -> np.ndarray:
    """`rates` moved by one log-odds shift so that their mean falls by `drop`."""
    if drop == 0:
        return rates
    logits = np.log(rates / (1 - rates))
    low, high = -30.0, 30.0
    for _ in range(80):
        middle = (low + high) / 2
        if (rates - 1 / (1 + np.exp(-(logits - middle)))).mean() < drop:
            low = middle
        else:
            high = middle
    return 1 / (1 + np.exp(-(logits - (low + high) / 2)))


def records(agent: str, outcomes: dict[int, list[bool]], first: int = 0) -> list[RunRecord]:
    """Graded runs of `agent`: case index → its runs' outcomes, repeats from `first`."""
    found = []
    for case, runs in outcomes.items():
        for offset, passed in enumerate(runs):
            found.append(
                RunRecord(
                    key=RunKey("", f"c{case}", agent, first + offset),
                    case_index=case,
                    prompt_index=0,
                    agent_index=0,
                    seed=first + offset,
                    prompt="",
                    vars={},
                    response=AgentResponse(cost=0.0),
                    status="pass" if passed else "fail",
                    grade=Grade(bool(passed), float(passed), ""),
                    latency_ms=1.0,
                )
            )
    return found


@dataclass
class World:
    """The true rates of one build: the stored baseline's, the fresh baseline's (after any
    drift) and the candidate's, and draws of runs from them."""

    rng: np.random.Generator
    stored: np.ndarray
    fresh: np.ndarray
    candidate: np.ndarray

    def runs(self, rates: np.ndarray, counts: Sequence[int]) -> dict[int, list[bool]]:
        return {i: list(self.rng.random(n) < rates[i]) for i, n in enumerate(counts) if n > 0}


def decide(suite: Suite, runs: list[RunRecord], spend: float) -> GateReport:
    return analyse(suite, runs, suite.gates, ENVIRONMENT, spend=spend)[1]


Outcome = tuple[str, int]  # the build's verdict under the environment's rule, agent calls


def fixed(suite: Suite, world: World, repeats: int, row: str | None = None) -> Outcome:
    """Both agents fresh at `repeats`: the build's verdict, or with `row` "fail" when that
    row of the gate table failed (the build named it) and "pass" otherwise."""
    counts = [repeats] * len(TAGS)
    runs = records("base", world.runs(world.fresh, counts)) + records(
        "cand", world.runs(world.candidate, counts)
    )
    report = decide(suite, runs, 0.05)
    if row is not None:
        named = any(g.name == row and g.status == "fail" for g in report.gates)
        return ("fail" if named else "pass"), len(runs)
    return report.outcome, len(runs)


def staged(suite: Suite, world: World, stages: tuple[int, ...] = (3, 5, 10)) -> Outcome:
    """`--until-decided`: a stage at a time until decided, or until no open gate can
    still fail by the last stage (`evals.pipeline.staged.cannot_fail`)."""
    base = world.runs(world.fresh, [stages[-1]] * len(TAGS))
    cand = world.runs(world.candidate, [stages[-1]] * len(TAGS))
    spends = look_spends(0.95, stages)
    for stage, (repeats, spend) in enumerate(zip(stages, spends, strict=True)):
        runs = records("base", {i: r[:repeats] for i, r in base.items()}) + records(
            "cand", {i: r[:repeats] for i, r in cand.items()}
        )
        report = decide(suite, runs, spend)
        if report.verdict != "undetermined" or cannot_fail(report, stage, stages, spends):
            break
    return report.outcome, len(runs)


@dataclass
class Baseline:
    """The baseline of a build with reuse: its runs, whether stored runs stand in for it,
    and the calls the guard (and a fallback) made."""

    runs: dict[int, list[bool]]
    reused: bool
    calls: int


def guarded(world: World, fallback_repeats: int | None) -> Baseline:
    """The stored baseline behind the drift guard (`evals.gates.baseline`): a share of its
    runs re-run fresh, compared with the stored ones, and on drift a fresh baseline of
    `fallback_repeats` (None: none, the caller runs it with the candidate)."""
    stored = world.runs(world.stored, [STORED_REPEATS] * len(TAGS))
    counts = {f"c{i}": (sum(r), len(r)) for i, r in stored.items()}
    chosen = baseline.guard_repeats(counts, seed=int(world.rng.integers(2**31)))
    fresh = {
        int(case[1:]): list(world.rng.random(len(reps)) < world.fresh[int(case[1:])])
        for case, reps in chosen.items()
    }
    calls = sum(len(r) for r in fresh.values())
    verdict = baseline.drift(
        {f"c{i}": (sum(r), len(r)) for i, r in fresh.items()},
        {f"c{i}": counts[f"c{i}"] for i in fresh},
    )
    if verdict.drifted:
        if fallback_repeats is None:
            return Baseline(fresh, reused=False, calls=calls)
        more = world.runs(world.fresh, [fallback_repeats] * len(TAGS))
        runs = {
            i: (fresh.get(i, []) + more[i])[: max(fallback_repeats, len(fresh.get(i, [])))]
            for i in more
        }
        added = sum(len(r) for r in runs.values()) - calls
        return Baseline(runs, reused=False, calls=calls + added)
    runs = {i: r.copy() for i, r in stored.items()}
    for case, reps in chosen.items():
        index = int(case[1:])
        for position, repeat in enumerate(reps):
            runs[index][repeat] = fresh[index][position]
    return Baseline(runs, reused=True, calls=calls)


def reuse(
    suite: Suite, world: World, repeats: int, reserve: float = baseline.DRIFT_RESERVE
) -> Outcome:
    """A fixed candidate of `repeats` against the guarded stored baseline, `reserve` of
    the budget kept while the stored runs stand in."""
    base = guarded(world, fallback_repeats=repeats)
    spend = 0.05 * (1 - reserve) if base.reused else 0.05
    cand = world.runs(world.candidate, [repeats] * len(TAGS))
    runs = records("base", base.runs) + records("cand", cand)
    return decide(suite, runs, spend).outcome, base.calls + sum(len(r) for r in cand.values())


def adaptive(
    suite: Suite,
    world: World,
    allocation: dict[int, int] | None = None,
    base: Baseline | None = None,
) -> Outcome:
    """`--adaptive 10` (looks every 2 repeats), both agents fresh; with `base`, the
    guarded stored baseline stands in for the baseline (its calls already made) and the
    candidate's repeats follow `allocation` (the planned repeats of each case at the last
    look), as `evals.pipeline.adaptive` runs them."""
    design = AdaptiveDesign(last=10, every=2, pass_futility=0.0, fail_only=True)
    reserve = 1 - baseline.DRIFT_RESERVE if base is not None and base.reused else 1.0
    spends = [s * reserve for s in design.spends(0.95, planned_test_split(suite, ENVIRONMENT))]
    planned = allocation or dict.fromkeys(range(len(TAGS)), design.last)
    fresh_base = base is None or not base.reused
    top = max(planned.values())
    cand_draws = world.runs(world.candidate, [top] * len(TAGS))
    base_draws = world.runs(world.fresh, [top] * len(TAGS))
    given = base.runs if base is not None else {}
    done = dict.fromkeys(range(len(TAGS)), 0)
    state = AdaptiveState(active=frozenset(c.id for c in suite.cases))
    outcome, calls = "undetermined", base.calls if base is not None else 0
    for look, (repeats, spend) in enumerate(zip(design.looks(), spends, strict=True), start=1):
        for case in range(len(TAGS)):
            if f"c{case}" in state.active:
                target = math.ceil(planned[case] * repeats / design.last)
                calls += max(target - done[case], 0)
                if fresh_base:  # the baseline runs alongside, after any guard runs
                    have = max(done[case], len(given.get(case, [])))
                    calls += max(target - have, 0)
                done[case] = max(done[case], target)
        cand = {i: cand_draws[i][: done[i]] for i in done if done[i]}
        bruns = given
        if fresh_base:
            bruns = {
                i: (given.get(i, []) + base_draws[i])[: max(done[i], len(given.get(i, [])))]
                for i in done
            }
        runs = records("base", bruns) + records("cand", cand)
        futility = design.futility_at(look, spends)
        futile = futility.judge if futility is not None else None
        report = settle(
            decide(suite, runs, spend), state.frozen(), look, repeats, len(runs), futile
        )
        state = advance(state, report, suite.cases, look, futile)
        outcome = report.outcome
        if report.verdict != "undetermined" or not state.active:
            break
    return outcome, calls


def saving(suite: Suite, world: World) -> Outcome:
    """The stored baseline with its drift guard, the candidate allocated from the
    baseline's history and run in looks."""
    base = guarded(world, fallback_repeats=None)
    history = {f"c{i}": (sum(r), len(r)) for i, r in base.runs.items()}
    if base.reused:
        planned = baseline.allocation(history, 10)
        allocation = {int(case[1:]): n for case, n in planned.items()}
    else:
        allocation = dict.fromkeys(range(len(TAGS)), 10)
    return adaptive(suite, world, allocation, base)


@dataclass
class Tally:
    """Outcomes and agent calls over simulated builds."""

    builds: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    calls: int = 0

    def add(self, outcome: Outcome) -> None:
        self.builds += 1
        self.outcomes[outcome[0]] = self.outcomes.get(outcome[0], 0) + 1
        self.calls += outcome[1]

    def share(self, outcome: str) -> float:
        return self.outcomes.get(outcome, 0) / max(self.builds, 1)

    def text(self, what: str, fixed_calls: float | None = None) -> str:
        rate = self.share("fail")
        error = math.sqrt(rate * (1 - rate) / max(self.builds, 1))
        calls = self.calls / max(self.builds, 1)
        ratio = f" ({calls / fixed_calls:.2f} of fixed k=10)" if fixed_calls else ""
        return (
            f"{what} {rate:.3f} (MC SE {error:.3f}), green {self.share('pass'):.3f}; "
            f"agent calls {calls:.0f}{ratio}"
        )


def world_of(
    rng: np.random.Generator,
    drift: float = 0.0,
    drop: float = 0.0,
    tags: Sequence[str] = (),
    steady: Sequence[str] = (),
) -> World:
    """One build's rates: the stored baseline's, the fresh baseline's `drift` points lower,
    the candidate `drop` points below the fresh baseline on `tags` (all cases when empty).
    The cases of the `steady` tags are all near 1 (Beta(30, 1), mean 97 %)."""
    stored = realistic_rates(rng)
    for i, tag in enumerate(TAGS):
        if tag in steady:
            stored[i] = rng.beta(30, 1)
    fresh = shifted(stored, drift)
    candidate = fresh.copy()
    chosen = np.array([not tags or TAGS[i] in tags for i in range(len(TAGS))])
    candidate[chosen] = shifted(fresh[chosen], drop)
    return World(rng, stored, fresh, candidate)


Design = Callable[[Suite, World], Outcome]


def tag_p_values(runs: int, seed: int, repeats: int) -> list[tuple[float, float]]:
    """The one-sided p-values of the suite's row and of `regression[units]` in builds of
    the `tag` row: what any split of the budget between them decides from."""
    suite = pr_suite()
    master = np.random.default_rng(seed)
    found = []
    for _ in range(runs):
        world = world_of(
            np.random.default_rng(int(master.integers(2**63))),
            drop=0.45,
            tags=("units",),
            steady=("units",),
        )
        counts = [repeats] * len(TAGS)
        report = decide(
            suite,
            records("base", world.runs(world.fresh, counts))
            + records("cand", world.runs(world.candidate, counts)),
            0.05,
        )
        p = {g.name: g.p_value for g in report.gates}
        found.append((p["regression"] or 1.0, p["regression[units]"] or 1.0))
    return found


def best_split(p_values: list[tuple[float, float]], budget: float = 0.05) -> tuple[float, float]:
    """The most builds any split of `budget` between the two rows alone fails (the
    other gates given nothing, the dropping tag known in advance), and its suite share."""
    best = (0.0, 0.0)
    for step in range(51):
        share = budget * step / 50
        failed = sum(s <= share or u <= budget - share for s, u in p_values) / len(p_values)
        best = max(best, (failed, share))
    return best


def row(runs: int, seed: int, designs: dict[str, Design], **world: object) -> dict[str, Tally]:
    """Every design on the same `runs` builds (each draws its own runs)."""
    suite = pr_suite()
    tallies = {name: Tally() for name in designs}
    master = np.random.default_rng(seed)
    for _ in range(runs):
        build_seed = int(master.integers(2**63))
        for name, design in designs.items():
            rng = np.random.default_rng(build_seed)
            tallies[name].add(design(suite, world_of(rng, **world)))  # type: ignore[arg-type]
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=20261207)
    rows = ["identical", "tag", "bound", "suite", "drops", "more", "staged", "calls"]
    parser.add_argument("--rows", nargs="*", default=rows, choices=rows)
    args = parser.parse_args()
    started = time.monotonic()
    print(
        f"{args.runs} simulated builds per row, seed {args.seed}; 20 cases (60 % near 1, 15 % "
        "near 0, 25 % flaky) in tags units 7, io 5, docs 4, net 4, 4 P0 cases; the pull "
        "request's gates with regression[tag] (tolerated loss 0.10) on every tag"
    )
    if "identical" in args.rows:
        print("\nidentical agents, 20 cases x 5 repeats, environment pr:")
        designs = {
            "fixed k=5": lambda s, w: fixed(s, w, 5),
            "staged 3,5,10": staged,
            "adaptive 10": lambda s, w: adaptive(s, w),
            "reuse, drift guard": lambda s, w: reuse(s, w, 5),
        }
        for name, tally in row(args.runs, args.seed, designs).items():
            print(f"  {name:<28} false failure {tally.text('')}")
        drifted = row(
            args.runs,
            args.seed + 1,
            {"reuse, 3-point drift": lambda s, w: reuse(s, w, 5)},
            drift=0.03,
        )
        for name, tally in drifted.items():
            print(f"  {name:<28} false failure {tally.text('')}")
    if "tag" in args.rows:
        tallies = row(
            args.runs,
            args.seed + 2,
            {
                "tag": lambda s, w: fixed(s, w, 5),
                "named": lambda s, w: fixed(s, w, 5, "regression[units]"),
            },
            drop=0.45,
            tags=("units",),
            steady=("units",),
        )
        print(
            "\ntag units (7 cases near 1, about 97 %) down 45 points, the other tags as they "
            f"were, 5 repeats: fails {tallies['tag'].text('')}; regression[units] fails "
            f"{tallies['named'].text('')}"
        )
    if "bound" in args.rows:
        print("\ntag units down 45 points as above: what no split of the budget can beat")
        for repeats in (5, 6, 7):
            p_values = tag_p_values(args.runs, args.seed + 2, repeats)
            failed, share = best_split(p_values)
            tally = row(
                args.runs,
                args.seed + 2,
                {"tag": lambda s, w, k=repeats: fixed(s, w, k)},
                drop=0.45,
                tags=("units",),
                steady=("units",),
            )["tag"]
            error = math.sqrt(failed * (1 - failed) / len(p_values))
            print(
                f"  {repeats} repeats: the gates fail {tally.text('')}; the whole 5 % on the "
                f"suite's and the tag's rows alone (suite {share:.3f}) at best {failed:.3f} "
                f"(MC SE {error:.3f})"
            )
    if "more" in args.rows:
        no_reserve = row(
            args.runs,
            args.seed + 1,
            {"reuse": lambda s, w: reuse(s, w, 5, reserve=0.0)},
            drift=0.03,
        )["reuse"]
        print(
            "\nidentical agents, stored baseline behind the drift guard, 3-point drift, no "
            f"budget in reserve: false failure {no_reserve.text('')}"
        )
        tally = row(
            args.runs,
            args.seed + 2,
            {"tag": lambda s, w: fixed(s, w, 12)},
            drop=0.45,
            tags=("units",),
            steady=("units",),
        )["tag"]
        print(f"tag units down 45 points as above, 12 repeats: fails {tally.text('')}")
    if "staged" in args.rows:
        print("\nstaged 3,5,10 (--until-decided) in the pull request's environment:")
        for label, world in (("identical agents", {}), ("a 20-point drop", {"drop": 0.20})):
            tallies = row(
                args.runs,
                args.seed + 6,
                {"staged": staged, "fixed k=10": lambda s, w: fixed(s, w, 10)},
                **world,
            )
            for name, tally in tallies.items():
                print(f"  {label}, {name}: fails {tally.text('')}")
    if "drops" in args.rows:
        print("\ndrops of the whole suite at 20 x 3 (one log-odds shift of every case):")
        for points in (0.10, 0.20, 0.30):
            tally = row(
                args.runs, args.seed + 5, {"drop": lambda s, w: fixed(s, w, 3)}, drop=points
            )["drop"]
            print(f"  {100 * points:.0f} points: fails {tally.text('')}")
    if "suite" in args.rows:
        tally = row(args.runs, args.seed + 3, {"suite": lambda s, w: fixed(s, w, 3)}, drop=0.20)[
            "suite"
        ]
        print(f"\na 20-point drop of the suite at 20 x 3: fails {tally.text('')}")
    if "calls" in args.rows:
        print(
            "\nagent calls against power: fixed k with both agents fresh against the stored "
            "baseline with its drift guard, the candidate allocated from its history, in looks:"
        )
        for label, world in (
            ("identical agents", {}),
            ("identical agents, 3-point drift", {"drift": 0.03}),
            ("a 6-point drop", {"drop": 0.06}),
            ("a 10-point drop", {"drop": 0.10}),
        ):
            designs: dict[str, Design] = {
                "fixed k=5": lambda s, w: fixed(s, w, 5),
                "fixed k=7": lambda s, w: fixed(s, w, 7),
                "fixed k=10": lambda s, w: fixed(s, w, 10),
                "saving": saving,
            }
            tallies = row(args.runs, args.seed + 4, designs, **world)
            reference = tallies["fixed k=10"].calls / tallies["fixed k=10"].builds
            print(f"  {label}:")
            for name, tally in tallies.items():
                print(f"    {name:<12} fails {tally.text('', reference)}")
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
