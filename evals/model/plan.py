"""One planned run: what the runner executes, with its identity and seeds."""

from __future__ import annotations

from dataclasses import dataclass

from evals.model.results import RunKey
from evals.model.suite import Case, Prompt, ProviderSpec


@dataclass(slots=True, frozen=True)
class PlannedRun:
    """One run to execute."""

    key: RunKey
    case: Case
    prompt: Prompt
    provider: ProviderSpec
    prompt_index: int
    agent_index: int
    seed: int
    shared_seed: int
