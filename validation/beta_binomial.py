"""Simulated suites and runs for checking the statistics: cases with their own true pass rate
drawn from a beta distribution, runs passing with that rate (the beta-binomial model)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evals.model.gates import GateConfig
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Case, EvaluateOptions, ProviderSpec, Suite


def numbered_cases(n_cases: int) -> list[Case]:
    """Cases c0 .. c{n-1} with no variables or assertions: only their outcomes matter."""
    return [Case(index=i, id=f"c{i}", description="", vars={}, asserts=[]) for i in range(n_cases)]


def tagged_cases(n_cases: int, tags: int = 5, p0: Sequence[int] = ()) -> list[Case]:
    """Cases c0 .. c{n-1}, case i tagged t{i % tags}, priority P0 for the indices in `p0`
    and P1 for the others."""
    return [
        Case(
            index=i,
            id=f"c{i}",
            description="",
            vars={},
            asserts=[],
            metadata={"tags": [f"t{i % tags}"], "priority": "P0" if i in p0 else "P1"},
        )
        for i in range(n_cases)
    ]


def simulated_suite(cases: Sequence[Case], agents: Sequence[str] = ("base", "cand")) -> Suite:
    """A suite holding `cases`, run by `agents` (each label is also its provider id)."""
    return Suite(
        path=Path("simulated.yaml"),
        suite_id="simulated",
        description="",
        version=None,
        prompts=[],
        providers=[ProviderSpec(agent, agent) for agent in agents],
        cases=list(cases),
        evaluate_options=EvaluateOptions(),
        gates=GateConfig(),
        env={},
        raw={},
        files=[],
        fingerprint="simulated",
    )


def case_rates(rng: np.random.Generator, n_cases: int, mu: float, icc: float) -> np.ndarray:
    """Each case's true pass rate: Beta with mean `mu` and intra-class correlation `icc`."""
    scale = (1 - icc) / icc
    return rng.beta(mu * scale, (1 - mu) * scale, size=n_cases)


def outcome_records(
    agent: str,
    outcomes: np.ndarray,
    seeds: Sequence[int] | None = None,
    errors: np.ndarray | None = None,
    error_kind: str = "agent_error",
    error: str = "agent raised RuntimeError: boom",
) -> list[RunRecord]:
    """Graded runs of `agent` from a cases x repeats array of pass/fail outcomes; run i of the
    flattened array gets seeds[i], or its repeat number without seeds. Where `errors` (the
    same shape) is true the run is an error row of `error_kind` with message `error`."""
    records = []
    for case, row in enumerate(outcomes):
        for repeat, passed in enumerate(row):
            seed = repeat if seeds is None else seeds[case * len(row) + repeat]
            errored = errors is not None and bool(errors[case, repeat])
            records.append(
                RunRecord(
                    key=RunKey("", f"c{case}", agent, repeat),
                    case_index=case,
                    prompt_index=0,
                    agent_index=0,
                    seed=seed,
                    prompt="",
                    vars={},
                    response=AgentResponse(cost=0.0, error=error if errored else None),
                    status="error" if errored else "pass" if passed else "fail",
                    grade=None if errored else Grade(bool(passed), float(passed), ""),
                    error=error if errored else None,
                    error_kind=error_kind if errored else None,
                    latency_ms=1.0,
                )
            )
    return records
