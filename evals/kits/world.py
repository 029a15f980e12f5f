"""The run's world state, as an agent's tools find it.

A suite with an `environment:` gives every run a fresh copy of its seed state; the agent
is told where it is (promptfoo's `context.evals.environment`, the `EVALS_ENVIRONMENT`
variable in an agent process) and its tools open it there, so what they change is what
the `final-state` assertion grades.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def world_path(context: Mapping[str, Any] | None = None) -> Path:
    """The path of the run's world state: from a provider call's `context`, else from the
    `EVALS_ENVIRONMENT` variable. Raises LookupError when the run has none (the suite
    declares no `environment:`)."""
    found = ((context or {}).get("evals") or {}).get("environment") or os.environ.get(
        "EVALS_ENVIRONMENT"
    )
    if not found:
        raise LookupError(
            "this run has no world state: declare the suite's environment "
            "(environment: {state: file://seed.sql})"
        )
    return Path(found)
