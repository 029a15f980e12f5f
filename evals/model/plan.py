"""One planned run: what the runner executes, with its identity and seeds."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from evals.model.results import RunKey
from evals.model.suite import Case, Prompt, ProviderSpec


@dataclass(slots=True, frozen=True)
class PlannedRun:
    """One run to execute; `look` is the look of an adaptive run it belongs to."""

    key: RunKey
    case: Case
    prompt: Prompt
    provider: ProviderSpec
    prompt_index: int
    agent_index: int
    seed: int
    shared_seed: int
    look: int | None = None

    @property
    def caller(self) -> ProviderSpec:
        """The provider actually called: the test's own `provider:` when it has one (the
        run still belongs to `provider`'s column, as in promptfoo), else `provider`. A
        simulated user only talks to `provider`, which is the one called."""
        test_provider = self.case.provider
        if test_provider is None or test_provider.id == SIMULATED_USER:
            return self.provider
        return test_provider

    @property
    def agent_key(self) -> str:
        """The key of the built agent that serves this run."""
        return agent_key(self.provider, self.case.provider)


SIMULATED_USER = "promptfoo:simulated-user"
"""The provider id of promptfoo's simulated user, a test's provider that holds a
conversation with the agent of the run's column."""


def agent_key(provider: ProviderSpec, test_provider: ProviderSpec | None) -> str:
    """The key of the built agent serving runs of `provider` in a test whose own provider is
    `test_provider` (None: the test has none). A simulated user's conversation is one agent
    per column and user configuration."""
    if test_provider is None:
        return provider.label
    if test_provider.id == SIMULATED_USER:
        config = json.dumps(test_provider.config, sort_keys=True, default=str)
        digest = hashlib.sha256(config.encode()).hexdigest()[:16]
        return f"{provider.label}\x1fsimulated user\x1f{test_provider.label}\x1f{digest}"
    return f"test provider\x1f{test_provider.id}\x1f{test_provider.label}"
