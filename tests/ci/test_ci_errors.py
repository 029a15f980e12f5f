"""A CI job that stops on an error still replaces the pull request's comment and summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from git_project import AGENT, AGENT_PATH, branch_with, github_env, make_project

from evals.cli import main
from evals.reports.ci import COMMENT_MARKER

CRASHING = "import module_that_does_not_exist\n" + AGENT


@pytest.mark.slow
def test_an_agent_that_crashes_on_import_leaves_a_fresh_comment_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    make_project(repo)
    branch_with(repo, "crash", {AGENT_PATH: CRASHING})
    monkeypatch.chdir(repo)
    summary = tmp_path / "step-summary.md"
    for name, value in github_env(
        "pull_request",
        "refs/pull/9/merge",
        GITHUB_BASE_REF="main",
        GITHUB_HEAD_REF="crash",
        GITHUB_STEP_SUMMARY=str(summary),
    ).items():
        monkeypatch.setenv(name, value)
    out = repo / ".evals" / "ci"
    out.mkdir(parents=True)
    (out / "comment.md").write_text("✅ evals pull request: PASS\n" + COMMENT_MARKER + "\n")

    code = main(["ci", "pr", "evals-suite", "--out", str(out), "--quiet"])

    assert code == 2
    comment = (out / "comment.md").read_text(encoding="utf-8")
    first = comment.splitlines()[0]
    assert first.startswith("### ❌ evals pull request: ERROR (exit 2)")
    assert "ModuleNotFoundError: No module named 'module_that_does_not_exist'" in comment
    assert "agent.py" in comment and "- what to do:" in comment
    assert "PASS" not in comment
    assert comment.rstrip().endswith(COMMENT_MARKER)
    assert "[workflow run](https://github.example/team/agent/actions/runs/4242)" in comment
    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    assert (outcome["verdict"], outcome["exit_code"]) == ("error", 2)
    assert summary.read_text(encoding="utf-8").startswith(first)


def test_a_nightly_that_stops_on_an_error_writes_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    suite = make_project(repo)
    suite.write_text(suite.read_text(encoding="utf-8") + "  - vars: [unclosed\n", "utf-8")
    monkeypatch.chdir(repo)
    for name, value in github_env("schedule", "refs/heads/main").items():
        monkeypatch.setenv(name, value)
    out = repo / ".evals" / "nightly"

    code = main(
        ["ci", "nightly", "evals-suite", "--store", str(tmp_path / "h.db"), "--out", str(out)]
    )

    assert code == 2
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### ❌ evals nightly: ERROR (exit 2)")
    assert "promptfooconfig.yaml" in summary and "- what to do:" in summary
    assert not (out / "comment.md").exists()
