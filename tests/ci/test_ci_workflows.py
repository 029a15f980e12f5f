"""The workflows lint clean (actionlint with shellcheck), and their steps work as written.

The nightly's shard and merge steps and the pull request's steps run, as bash runs them
in GitHub Actions, on a throwaway git project (a suite and an agent on main, a branch
that breaks one tag). A stand-in `gh` hands the nightly's store artifact to the pull
request, and the comment step's script runs under node against a recorded GitHub API.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from git_project import AGENT_PATH, REGRESSION, branch_with, git, github_env, make_project
from workflow_steps import (
    WORKFLOWS,
    fake_gh,
    literal_env,
    load_workflow,
    run_github_script,
    run_step,
    step,
    uses_step,
)

from evals.reports.ci import COMMENT_MARKER
from evals.store import open_store

ACTIONLINT = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which(
    "actionlint"
)
SHELLCHECK = shutil.which("shellcheck")
needs_actionlint = pytest.mark.skipif(
    ACTIONLINT is None or SHELLCHECK is None,
    reason="actionlint (dev extra) and shellcheck (apt-get install shellcheck) are needed",
)


def _actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT is not None
    return subprocess.run(
        [ACTIONLINT, *map(str, files)], capture_output=True, text=True, check=False
    )


@needs_actionlint
def test_workflows_pass_actionlint_with_shellcheck() -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert [f.name for f in files] == [
        "ci.yml",
        "evals-nightly.yml",
        "evals-pr-publish.yml",
        "evals-pr.yml",
    ]
    result = _actionlint(*files)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_actionlint
def test_actionlint_rejects_a_broken_workflow_and_runs_shellcheck(tmp_path: Path) -> None:
    text = (WORKFLOWS / "evals-pr.yml").read_text(encoding="utf-8")
    broken = tmp_path / "broken.yml"
    broken.write_text(text.replace("runs-on: ubuntu-latest", "runs-on: [ubuntu-latest"), "utf-8")
    assert _actionlint(broken).returncode != 0
    unquoted = tmp_path / "unquoted.yml"
    unquoted.write_text(text.replace('--out "$EVALS_CI_DIR"', "--out $EVALS_CI_DIR"), "utf-8")
    result = _actionlint(unquoted)
    assert result.returncode != 0 and "SC2086" in result.stdout


def test_the_workflows_are_wired_as_the_docs_say() -> None:
    pr = load_workflow("evals-pr.yml")
    nightly = load_workflow("evals-nightly.yml")
    triggers = pr[True]
    paths = triggers["pull_request"]["paths"]
    assert "cases/**" in paths
    # What the agents run with is part of them: dependency files trigger the job.
    assert {"pyproject.toml", "**/requirements*.txt", "uv.lock", "poetry.lock"} <= set(paths)
    assert triggers["workflow_dispatch"]["inputs"]["pr"]["required"] is True
    assert triggers["workflow_dispatch"]["inputs"]["sha"]["required"] is True
    assert pr["concurrency"]["cancel-in-progress"] is True
    assert "evals-pr-" in pr["concurrency"]["group"]
    assert nightly["concurrency"]["cancel-in-progress"] is False
    assert nightly["env"]["EVALS_EVALUATION_ID"] == "nightly-${{ github.run_id }}"
    merge = nightly["jobs"]["merge"]
    assert merge["needs"] == "shard" and "always()" in merge["if"]
    assert merge["environment"] == "evals-store"
    pr_text = (WORKFLOWS / "evals-pr.yml").read_text(encoding="utf-8")
    assert "secrets.EVALS_STORE_URL" not in pr_text
    assert "secrets.EVALS_STORE_READ_URL" in pr_text
    shard_text = json.dumps(nightly["jobs"]["shard"])
    assert "EVALS_STORE_URL" not in shard_text
    publish = load_workflow("evals-pr-publish.yml")["jobs"]["publish"]
    script = uses_step(publish, "actions/github-script")["with"]["script"]
    assert f"'{COMMENT_MARKER}'" in script
    check = uses_step(publish, "EnricoMi/publish-unit-test-result-action")
    assert check["with"]["files"] == "evals-pr/*.junit.xml"


def _nightly_env(workflow: dict, work: Path, suite: str) -> dict[str, str]:
    return (
        literal_env(workflow["env"])
        | github_env("schedule", "refs/heads/main")
        | {
            "EVALS_SUITE": suite,
            "EVALS_KEEP": "5",
            "EVALS_EVALUATION_ID": "nightly-7",
            "GITHUB_STEP_SUMMARY": str(work.parent / "nightly-summary.md"),
        }
    )


def _run_nightly(work: Path, bin_dir: Path, suite: str, shards: list[int]) -> tuple[int, Path]:
    """The shard steps of `shards`, then the merge job's steps; the merge's exit code."""
    workflow = load_workflow("evals-nightly.yml")
    env = _nightly_env(workflow, work, suite)
    shard_job = workflow["jobs"]["shard"]
    count = shard_job["env"]["SHARD_COUNT"]
    assert shard_job["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
    fake_gh(bin_dir, None)
    for index in shards:
        shard_env = env | {"SHARD_INDEX": str(index), "SHARD_COUNT": str(count)}
        result = run_step(step(shard_job, "shard"), work, shard_env, bin_dir)
        assert result.returncode == 0, result.stderr
    merge_job = workflow["jobs"]["merge"]
    result = run_step(step(merge_job, "previous"), work, env, bin_dir)
    assert result.returncode == 0, result.stderr
    merged = run_step(step(merge_job, "nightly"), work, env, bin_dir)
    return merged.returncode, work / env["EVALS_NIGHTLY_DIR"] / "results.db"


@pytest.mark.slow
def test_nightly_then_pull_request_steps_in_a_git_project(tmp_path: Path) -> None:
    work, bin_dir = tmp_path / "repo", tmp_path / "bin"
    work.mkdir()
    # A team that cares about one tag gates it on its own: the regression is on that tag.
    suite = make_project(work, gates="  per_tag: {news: {max_regression: 0.1}}\n")
    code, store = _run_nightly(work, bin_dir, str(suite.parent.relative_to(work)), [1, 2, 3, 4])
    assert code == 0
    reader = open_store(str(store))
    try:
        [meta] = reader.list_evaluations()
        assert (meta.id, meta.environment, meta.git_branch, meta.status) == (
            "nightly-7",
            "nightly",
            "main",
            "complete",
        )
        assert meta.ci_event == "schedule"
    finally:
        reader.close()
    summary = (tmp_path / "nightly-summary.md").read_text(encoding="utf-8")
    assert "evals nightly: PASS" in summary
    assert "no baseline of main yet to compare with" in summary

    branch_with(work, "regression", {AGENT_PATH: REGRESSION})
    workflow = load_workflow("evals-pr.yml")
    job = workflow["jobs"]["evals"]
    env = (
        literal_env(workflow["env"])
        | github_env(
            "pull_request",
            "refs/pull/12/merge",
            GITHUB_BASE_REF="main",
            GITHUB_HEAD_REF="regression",
            GITHUB_RUN_ATTEMPT="1",
        )
        | {
            "EVALS_SUITE": str(suite.parent.relative_to(work)),
            "EVALS_PR": "12",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "pr-summary.md"),
        }
    )
    artifact = tmp_path / "evals-store.db"
    shutil.copy(store, artifact)
    fake_gh(bin_dir, artifact)
    fetched = run_step(step(job, "nightly"), work, env, bin_dir)
    assert fetched.returncode == 0, fetched.stderr
    assert "store artifact of nightly run 4242" in fetched.stdout
    evaluated = run_step(step(job, "evals"), work, env, bin_dir)
    ci = work / env["EVALS_CI_DIR"]
    comment = (ci / "comment.md").read_text(encoding="utf-8")
    assert evaluated.returncode == 1, evaluated.stdout + evaluated.stderr + comment
    assert comment.rstrip().endswith(COMMENT_MARKER) and "evals pull request: FAIL" in comment
    # The workflow's stages: the first look (3 repeats, main's side from the nightly's
    # stored runs) already shows the news tag's loss beyond its tolerance.
    assert env["EVALS_PR_ARGS"] == "--until-decided 3,6,12"
    assert "staged until decided: 1 of 3 stage(s) (3 repeat(s): fail)" in comment
    assert "| ❌ | regression[news] |" in comment
    assert "evals pull request: FAIL" in (tmp_path / "pr-summary.md").read_text(encoding="utf-8")
    [junit] = ci.glob("*.junit.xml")
    failures = [
        case for case in ET.parse(junit).iter("testcase") if case.find("failure") is not None
    ]
    assert any("regression" in (case.get("name") or "") for case in failures)

    head = git(work, "rev-parse", "HEAD")
    described = run_step(step(job, "describe"), work, env | {"HEAD_SHA": head}, bin_dir)
    assert described.returncode == 0, described.stderr
    # The publishing workflow reads the uploaded folder as data (the artifact).
    artifact_dir = tmp_path / "publish" / "evals-pr"
    shutil.copytree(ci, artifact_dir)
    calls = publish(tmp_path / "publish", head, pr=12, comments=[])
    assert [call[0] for call in calls] == ["commits", "list", "create", "output"]
    created = calls[2][1]
    assert created["issue_number"] == 12 and COMMENT_MARKER in created["body"]
    assert created["body"].startswith("### ❌ evals pull request: FAIL")
    assert "https://github.example/team/agent/actions/runs/4242" in created["body"]
    assert calls[3] == ["output", "sha", head]
    existing = [
        {"id": 3, "body": "looks good to me", "user": {"type": "User"}},
        {"id": 4, "body": f"quoting {COMMENT_MARKER}", "user": {"type": "User"}},
        {"id": 55, "body": created["body"], "user": {"type": "Bot"}},
    ]
    calls = publish(tmp_path / "publish", head, pr=12, comments=existing)
    assert [call[0] for call in calls] == ["commits", "list", "update", "output"]
    assert calls[2][1]["comment_id"] == 55

    reader = open_store(str(store))
    try:
        assert [e.id for e in reader.list_evaluations()] == ["nightly-7"]
    finally:
        reader.close()


def publish(
    folder: Path,
    head_sha: str,
    *,
    pr: int,
    comments: list[dict[str, object]],
    commits: dict[str, list[str]] | None = None,
    event: str = "pull_request",
) -> list[list[object]]:
    """The publishing workflow's comment step on the artifact in `folder/evals-pr`, as the
    `workflow_run` of a run that evaluated `head_sha` of pull request `pr`."""
    workflow = load_workflow("evals-pr-publish.yml")
    script = uses_step(workflow["jobs"]["publish"], "actions/github-script")["with"]["script"]
    payload = {
        "workflow_run": {
            "event": event,
            "head_sha": head_sha,
            "html_url": "https://github.example/team/agent/actions/runs/4242",
            "pull_requests": [{"number": pr}] if event == "pull_request" else [],
        }
    }
    return run_github_script(
        script,
        folder,
        {},
        comments=comments,
        payload=payload,
        commits=commits if commits is not None else {str(pr): [head_sha]},
    )


@pytest.mark.slow
def test_a_nightly_with_a_failed_shard_is_stored_incomplete_and_fails(tmp_path: Path) -> None:
    work, bin_dir = tmp_path / "repo", tmp_path / "bin"
    work.mkdir()
    suite = make_project(work)

    code, store = _run_nightly(work, bin_dir, str(suite.parent.relative_to(work)), [1, 2, 4])

    assert code == 3
    reader = open_store(str(store))
    try:
        [meta] = reader.list_evaluations()
        assert meta.status == "incomplete" and meta.stored_runs < meta.planned_runs
        assert reader.baselines(meta.suite_id) == []
    finally:
        reader.close()
    summary = (tmp_path / "nightly-summary.md").read_text(encoding="utf-8")
    assert "INCOMPLETE: 75 of 100 planned runs" in summary
    assert "shard(s) 3/4 missing: 75 of 100 planned runs merged" in summary
