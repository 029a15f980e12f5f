"""How to run a suite: the caller's options of one evaluation (`RunOptions`), and where an
evaluation run in several passes stands at the next (`EvaluationState`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evals.model.protocols import ReportSink, StoreSink
from evals.model.summary import BaselineReuse, GateResult


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run a suite, as its caller asks: repeats, concurrency, filters, environment,
    store. Frozen: a changed copy is made with `dataclasses.replace`, never by assignment.

    `keep_records=False` keeps no run in the result: the statistics, gates and the
    terminal summary come from counts taken as the runs arrive, and the reports that list
    every run read them from the store; unless the evaluation plans fewer runs than
    `keep_records_below`, whose reports read their runs from memory (once each, where the
    store would be read once per report and pass).
    `store_process` is a `StoreProcess` the caller started early (it overlaps the
    store's start-up with loading the suite) and closes itself; `report_process`, likewise,
    a `ReportProcess` writing the JSON report as runs complete (the caller finishes it).
    `cache` answers calls from the response cache (`cache_path`, by default
    `.evals/cache/responses.db`). `pass_env` names environment variables handed to Ray
    workers (with the suite's `pass_env:`; their values are never stored). `branch` is
    recorded instead of git's (`evals ci` sets it from the trusted CI event).
    """

    repeat: int | None = None
    concurrency: int | None = None
    timeout_s: float | None = None
    tags: list[str] | None = None
    case_ids: list[str] | None = None
    agents: list[str] | None = None
    environment: str | None = None
    store_url: str | None = None
    use_store: bool = True
    resume: str | bool | None = None
    shard: tuple[int, int] | None = None
    progress: bool = True
    evaluation_id: str | None = None
    grader: str | None = None
    executor: str = "local"
    ray_address: str | None = None
    pass_env: list[str] | None = None
    cache: bool = False
    cache_path: str | None = None
    trace: bool | None = None
    keep_records: bool = True
    keep_records_below: int = 0
    seed: int = 0
    store_process: StoreSink | None = None
    report_process: ReportSink | None = None
    branch: str | None = None

    @property
    def names_cases(self) -> bool:
        """True when the caller chose the cases, by tag (`--tag`) or by id (`--case`)."""
        return self.tags is not None or bool(self.case_ids)

    def chosen_tags(self, environment_tags: list[str] | None) -> list[str] | None:
        """The tags that select the cases: the caller's when the caller chose the cases,
        else the environment's (`gates.environments.<env>.tags`): cases named explicitly
        run whatever the environment's tags would choose."""
        return self.tags if self.names_cases else environment_tags


@dataclass(frozen=True, slots=True)
class EvaluationState:
    """Where an evaluation stands when a driver of several passes (staged repeats, adaptive
    looks, a stored baseline standing in, a pull request's comparison) runs one more: set
    by that driver, never asked by the caller, and frozen like the options.

    `spend` is the build's false-failure budget the gates may use in this decision (a
    staged run's share for one look); None spends the whole of 1 - confidence. An adaptive
    run's look sets `look` (recorded in each new run's metadata), `active_cases` (only these
    cases get the new repeats), `frozen_gates` (gates decided at earlier looks keep those
    results) and `futile` (which undetermined gates the look judges can no longer be
    decided). `units` runs only these (case id, repeat) pairs (the drift guard's fresh
    runs); `allocation` caps the candidate's repeats of each case at that share of the
    look's repeats (a per-case allocation); `baseline_reuse` is the stored baseline
    standing in for the baseline's runs, through the response cache, which the gates'
    spend and report follow (`evals.pipeline.reuse`).
    """

    spend: float | None = None
    look: int | None = None
    active_cases: frozenset[str] | None = None
    frozen_gates: dict[str, GateResult] | None = None
    futile: Callable[[GateResult], bool] | None = None
    units: frozenset[tuple[str, int]] | None = None
    allocation: dict[str, float] | None = None
    baseline_reuse: BaselineReuse | None = None
