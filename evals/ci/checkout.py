"""The base of a pull request, checked out beside it, and suites described from outside.

A pull request's job has the pull request's code. Main's agent is the code at the merge
base of the pull request and its base branch: `base_checkout` adds a detached git
worktree of that commit in a temporary folder and removes it afterwards.

Code of the base must not be imported into the harness's process, whose modules are the
pull request's (two `agent.py` files importing two versions of a sibling module would
see one of them). The base suite is therefore described (`describe_suite`) and run in a
child process, `python -P -m evals ...`, with the interpreter and environment of
`evals.ci.base_env` (its own import path, its own virtual environment when the
project is installed): `-P` keeps the child from importing an `evals` folder the base
checkout may hold instead of the installed harness.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.ci.base_env import BaseEnvironment
from evals.model.errors import HarnessFault, SuiteError
from evals.model.suite import SuiteOutline

GIT_TIMEOUT_S = 120


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its stdout, stripped. A failure is a SuiteError with git's words."""
    try:
        answer = subprocess.run(
            ["git", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HarnessFault(f"git {' '.join(args)} failed: {exc}") from None
    if answer.returncode != 0:
        raise SuiteError(
            f"git {' '.join(args)} failed: {answer.stderr.strip() or answer.stdout.strip()}",
            file=str(repo),
            fix="run in a git checkout with the base branch fetched "
            "(actions/checkout with fetch-depth: 0)",
        )
    return answer.stdout.strip()


def repository_root(path: Path) -> Path:
    """The top folder of the git repository holding `path`."""
    folder = path if path.is_dir() else path.parent
    return Path(git(folder, "rev-parse", "--show-toplevel")).resolve()


def merge_base(repo: Path, refs: Sequence[str]) -> tuple[str, str]:
    """(ref, commit): the merge base of HEAD with the first of `refs` that resolves."""
    for ref in refs:
        with contextlib.suppress(SuiteError):
            git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
            return ref, git(repo, "merge-base", "HEAD", ref)
    raise SuiteError(
        f"none of the base refs {', '.join(refs)} exists in this checkout",
        file=str(repo),
        fix="fetch the base branch (actions/checkout with fetch-depth: 0) or pass --base REF",
    )


@contextlib.contextmanager
def base_checkout(repo: Path, commit: str) -> Iterator[Path]:
    """A detached worktree of `commit` in a temporary folder, removed on exit."""
    with tempfile.TemporaryDirectory(prefix="evals-base-") as scratch:
        folder = Path(scratch) / "base"
        git(repo, "worktree", "add", "--detach", "--quiet", str(folder), commit)
        try:
            yield folder
        finally:
            with contextlib.suppress(SuiteError, HarnessFault):
                git(repo, "worktree", "remove", "--force", str(folder))


def harness_command(python: str, *args: str) -> list[str]:
    """`python -P -m evals ARGS`: the installed harness, whatever folder it runs in."""
    return [python, "-P", "-m", "evals", *args]


@dataclass(slots=True)
class SuiteIdentity:
    """A suite as `evals validate --json` describes it: outline and agent fingerprints."""

    outline: SuiteOutline
    agent_fingerprints: dict[str, str]


def describe_suite(suite: Path, cwd: Path, environment: BaseEnvironment) -> SuiteIdentity | None:
    """The identity of the suite at `suite`, loaded in a child process of `environment`;
    None if absent."""
    if not suite.exists():
        return None
    answer = subprocess.run(
        harness_command(environment.python, "validate", "--json", str(suite)),
        cwd=cwd,
        env=environment.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if answer.returncode != 0:
        raise SuiteError(
            f"the suite at the base commit does not load: {answer.stderr.strip()}",
            file=str(suite),
            fix="the base's suite must load for its agents to be run; rebase onto a base "
            "whose suite is valid",
        )
    document = json.loads(answer.stdout)
    return SuiteIdentity(
        SuiteOutline.from_dict(document["outline"]), dict(document["agent_fingerprints"])
    )
