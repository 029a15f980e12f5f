"""Which commit and branch an evaluation records."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evals.pipeline.evaluation import git_info


@pytest.fixture(autouse=True)
def _no_ci_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_SHA", "CI_COMMIT_SHA", "GITHUB_HEAD_REF", "GITHUB_REF_NAME"):
        monkeypatch.delenv(name, raising=False)


def _repository(path: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q", "-b", "feature/x")
    (path / "suite.yaml").write_text("tests: []\n")
    git("add", "suite.yaml")
    git("commit", "-q", "-m", "suite")
    return git("rev-parse", "HEAD")


def test_the_commit_and_branch_of_the_suites_repository(tmp_path: Path) -> None:
    commit = _repository(tmp_path)

    assert git_info(tmp_path) == (commit, "feature/x")


def test_outside_a_repository_both_are_unknown(tmp_path: Path) -> None:
    assert git_info(tmp_path) == (None, None)


def test_ci_variables_win_over_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit = _repository(tmp_path)
    monkeypatch.setenv("GITHUB_HEAD_REF", "pr-branch")

    assert git_info(tmp_path) == (commit, "pr-branch")
    monkeypatch.setenv("GITHUB_SHA", "abc123")
    assert git_info(tmp_path) == ("abc123", "pr-branch")
