"""Where an evaluation in CI comes from: the trusted event context of GitHub Actions.

`evals ci` takes the environment and branch an evaluation records from the event that
started the job, never from variables a pull request can set: GitHub sets the
`GITHUB_*` variables of a job and a workflow cannot override them. On `schedule`,
`push` and `workflow_dispatch` the branch is the one `GITHUB_REF` names; on a pull
request the environment is `pr` whatever is asked, and `evals ci nightly` refuses to run.
Outside GitHub Actions (no `GITHUB_EVENT_NAME`) the branch comes from git.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from evals.store.baselines import PULL_REQUEST_EVENTS


@dataclass(frozen=True, slots=True)
class CiContext:
    """The facts of the CI job an evaluation runs in (all None outside CI)."""

    event: str | None = None
    ref: str | None = None
    sha: str | None = None
    head_ref: str | None = None
    base_ref: str | None = None
    run_url: str | None = None

    @property
    def is_pull_request(self) -> bool:
        """True when a pull request (or a merge queue) started the job."""
        return self.event in PULL_REQUEST_EVENTS

    @property
    def branch(self) -> str | None:
        """The branch the job evaluates: the pushed or scheduled branch, a pull
        request's head branch; None for tags and outside CI."""
        if self.is_pull_request:
            return self.head_ref or None
        if self.ref and self.ref.startswith("refs/heads/"):
            return self.ref[len("refs/heads/") :]
        return None

    @property
    def pull_request(self) -> int | None:
        """The pull request's number, from `refs/pull/N/merge`."""
        parts = (self.ref or "").split("/")
        if len(parts) == 4 and parts[:2] == ["refs", "pull"] and parts[2].isdigit():
            return int(parts[2])
        return None


def ci_context(environ: Mapping[str, str] | None = None) -> CiContext:
    """The GitHub Actions context of this process (an empty context outside it)."""
    env = os.environ if environ is None else environ
    event = env.get("GITHUB_EVENT_NAME") or None
    if event is None:
        return CiContext()
    run_url = None
    if env.get("GITHUB_SERVER_URL") and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_RUN_ID"):
        run_url = (
            f"{env['GITHUB_SERVER_URL']}/{env['GITHUB_REPOSITORY']}/actions/runs/"
            f"{env['GITHUB_RUN_ID']}"
        )
    return CiContext(
        event=event,
        ref=env.get("GITHUB_REF") or None,
        sha=env.get("GITHUB_SHA") or None,
        head_ref=env.get("GITHUB_HEAD_REF") or None,
        base_ref=env.get("GITHUB_BASE_REF") or None,
        run_url=run_url,
    )
