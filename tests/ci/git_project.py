"""A throwaway git project with a suite and an in-process Python agent, for the CI loop.

The agent answers from its seed, so runs with equal seeds give equal answers: a change
that does not alter what the agent says gives identical runs on both sides, and a change
that breaks one tag shows up on exactly that tag's cases.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

AGENT = """\
import os
import random


def call_api(prompt, options, context):
    draw = random.Random(context["seed"]).random()
    topic = context["vars"]["topic"]
    verdict = "correct" if draw < 0.9 else "wrong"
    if os.environ.get("CALL_API_WORLD") == "moved":  # the API it calls changed meanwhile
        verdict = "wrong"
    return {"output": f"{verdict}: {topic}", "cost": 0.001}
"""

HARMLESS = AGENT.replace(
    "    draw = ", "    # The seed decides, so equal seeds answer alike.\n    draw = "
)

# Breaks every case tagged `news`: a regression on one tag.
REGRESSION = AGENT.replace(
    '    verdict = "correct" if draw < 0.9 else "wrong"',
    '    verdict = "correct" if draw < 0.9 and topic != "news" else "wrong"',
)

# Answers as often as main's agent does, but from other draws: a change the data needs
# many runs to judge.
RESHUFFLED = AGENT.replace('random.Random(context["seed"])', 'random.Random(context["seed"] + 1)')

SUITE = """\
description: a seeded agent
prompts: ["{{question}}"]
providers:
  - {id: "file://agent.py", label: agent}
evaluateOptions: {repeat: 2, maxConcurrency: 4}
gates:
  min_pass_rate: 0.5
  max_regression: 0.1
  environments:
    pr: {tags: [golden], repeat: 4}
    nightly: {repeat: 4}
defaultTest:
  assert:
    - {type: icontains, value: "correct"}
tests:
"""

AGENT_PATH = "evals-suite/agent.py"
TOPICS = (*("news", "prices", "weather") * 8, "other")


def suite_text(topics: tuple[str, ...] = TOPICS) -> str:
    """The suite YAML: one case per topic, all golden but the last."""
    tests = "".join(
        f"  - description: case {i} about {topic}\n"
        f"    vars: {{question: 'q{i}', topic: {topic}}}\n"
        f"    metadata: {{tags: [{topic}{', golden' if i < len(topics) - 1 else ''}]}}\n"
        for i, topic in enumerate(topics)
    )
    return SUITE + tests


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` as a fixed author; stdout."""
    return subprocess.run(
        ["git", "-c", "user.name=evals", "-c", "user.email=evals@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def make_project(repo: Path, gates: str = "") -> Path:
    """A git repository on `main` holding the suite and its agent; returns the suite path.

    `gates` adds lines to the suite's `gates:` block (indented two spaces)."""
    suite_dir = repo / "evals-suite"
    suite_dir.mkdir(parents=True)
    (suite_dir / "agent.py").write_text(AGENT, encoding="utf-8")
    text = suite_text().replace("  max_regression: 0.1\n", f"  max_regression: 0.1\n{gates}", 1)
    (suite_dir / "promptfooconfig.yaml").write_text(text, encoding="utf-8")
    (repo / ".gitignore").write_text(".evals/\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "suite and agent")
    return suite_dir / "promptfooconfig.yaml"


def branch_with(repo: Path, name: str, files: dict[str, str], start: str = "main") -> str:
    """A branch from `start` that changes `files` (paths relative to the repo); its commit."""
    git(repo, "checkout", "-q", "-b", name, start)
    for rel, text in files.items():
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", f"change on {name}")
    return git(repo, "rev-parse", "HEAD")


def github_env(event: str, ref: str, **extra: str) -> dict[str, str]:
    """The GITHUB_* variables of a job started by `event` on `ref`."""
    return {
        "GITHUB_EVENT_NAME": event,
        "GITHUB_REF": ref,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": "team/agent",
        "GITHUB_RUN_ID": "4242",
        **extra,
    }


def as_scheduled_job(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work in `repo` with the environment of a scheduled job on main: GitHub's variables
    of that event, and none of a pull request's or the store's."""
    monkeypatch.chdir(repo)
    for name in ("GITHUB_HEAD_REF", "GITHUB_SHA", "GITHUB_STEP_SUMMARY", "EVALS_STORE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in github_env("schedule", "refs/heads/main").items():
        monkeypatch.setenv(name, value)
