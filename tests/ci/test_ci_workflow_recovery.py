"""The workflows recover and hold nothing worth stealing.

- "Re-run failed jobs" on a nightly: the shards of the first attempt and the re-run
  shard of the second are one evaluation, merged complete (the newest attempt of each
  shard), replacing the incomplete one the first attempt stored.
- A damaged store artifact is skipped for an older one, a damaged history is never
  uploaded, and the jobs go on without it.
- The pull request's agents run in a job with read-only permissions and no token in
  `.git/config`; the comment and the check are published by a `workflow_run` job that
  checks out nothing; a run by hand evaluates the reviewed commit only.

The steps run as GitHub's bash runs them (`workflow_steps.run_step`), in a throwaway git
project; artifacts are folders moved between the jobs' working copies, as
upload-artifact and download-artifact move them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from git_project import git, github_env, make_project
from test_ci_workflows import publish
from workflow_steps import fake_gh, literal_env, load_workflow, run_step, step, uses_step

from evals.store import open_store

RUN_ID = "7"


def _nightly_env(work: Path, suite: Path, attempt: int, **extra: str) -> dict[str, str]:
    workflow = load_workflow("evals-nightly.yml")
    return (
        literal_env(workflow["env"])
        | github_env("schedule", "refs/heads/main", GITHUB_RUN_ATTEMPT=str(attempt))
        | {
            "EVALS_SUITE": str(suite.parent.relative_to(work)),
            "EVALS_KEEP": "5",
            # The workflow's `nightly-${{ github.run_id }}`: the run's, not the attempt's.
            "EVALS_EVALUATION_ID": f"nightly-{RUN_ID}",
            "GITHUB_STEP_SUMMARY": str(work.parent / f"summary-{attempt}.md"),
            **extra,
        }
    )


def _shard(work: Path, bin_dir: Path, env: dict[str, str], index: int, artifacts: Path) -> Path:
    """Run the shard job's step for shard `index`, then upload its folder as the
    artifact the workflow names (`evals-shard-N-attempt-A`)."""
    job = load_workflow("evals-nightly.yml")["jobs"]["shard"]
    shard_env = env | {"SHARD_INDEX": str(index), "SHARD_COUNT": str(job["env"]["SHARD_COUNT"])}
    shutil.rmtree(work / ".evals" / "shards", ignore_errors=True)  # a fresh runner
    result = run_step(step(job, "shard"), work, shard_env, bin_dir)
    assert result.returncode == 0, result.stderr
    name = f"evals-shard-{index}-attempt-{env['GITHUB_RUN_ATTEMPT']}"
    assert uses_step(job, "actions/upload-artifact")["with"]["name"] == (
        "evals-shard-${{ matrix.shard }}-attempt-${{ github.run_attempt }}"
    )
    shutil.move(work / ".evals" / "shards", artifacts / name)
    return artifacts / name / f"shard-{index}.db"


def _merge(work: Path, bin_dir: Path, env: dict[str, str], artifacts: Path) -> int:
    """Download every shard artifact of the run (each in a folder of its own), then run
    the merge job's steps; the merge's exit code."""
    merge = load_workflow("evals-nightly.yml")["jobs"]["merge"]
    shards = work / ".evals" / "shards"
    shutil.rmtree(shards, ignore_errors=True)
    shutil.copytree(artifacts, shards)
    for step_id in ("previous",):
        result = run_step(step(merge, step_id), work, env, bin_dir)
        assert result.returncode == 0, result.stderr
    return run_step(step(merge, "nightly"), work, env, bin_dir).returncode


def _drop_half(store: Path) -> int:
    """Delete half the runs of a shard store, as a shard killed halfway leaves it."""
    with sqlite3.connect(store) as db:
        ids = [row[0] for row in db.execute("SELECT id FROM runs ORDER BY id")]
        db.execute("PRAGMA foreign_keys = ON")
        db.executemany("DELETE FROM runs WHERE id = ?", [(i,) for i in ids[: len(ids) // 2]])
        return len(ids) - len(ids) // 2


@pytest.mark.slow
def test_a_shard_rerun_in_a_second_attempt_completes_the_nightly(tmp_path: Path) -> None:
    work, bin_dir, artifacts = tmp_path / "repo", tmp_path / "bin", tmp_path / "artifacts"
    work.mkdir()
    artifacts.mkdir()
    suite = make_project(work)
    team_store = tmp_path / "team.db"  # the team's store: it outlives the attempts
    fake_gh(bin_dir, None)

    # Attempt 1: shard 2 dies halfway (what it stored is uploaded all the same).
    first = _nightly_env(work, suite, 1, EVALS_STORE_URL=str(team_store))
    for index in (1, 2, 3, 4):
        stored = _shard(work, bin_dir, first, index, artifacts)
        if index == 2:
            left = _drop_half(stored)
    assert _merge(work, bin_dir, first, artifacts) == 3
    summary = (tmp_path / "summary-1.md").read_text(encoding="utf-8")
    assert f"INCOMPLETE: {75 + left} of 100 planned runs" in summary

    # Attempt 2 ("Re-run failed jobs"): shard 2 again, then the merge.
    second = _nightly_env(work, suite, 2, EVALS_STORE_URL=str(team_store))
    _shard(work, bin_dir, second, 2, artifacts)
    assert _merge(work, bin_dir, second, artifacts) == 0

    summary = (tmp_path / "summary-2.md").read_text(encoding="utf-8")
    assert "complete: 100 of 100 planned runs" in summary
    assert f"merged shard(s) 1/4, 2/4, 3/4, 4/4 of evaluation `nightly-{RUN_ID}`" in summary
    assert "shard 2/4: 2 attempts, the newest merged" in summary
    assert "evals-shard-2-attempt-2" in summary and "left out:" in summary
    assert f"replaced evaluation `nightly-{RUN_ID}` as an earlier attempt merged it" in summary
    store = open_store(str(team_store))
    try:
        [meta] = store.list_evaluations()
        assert (meta.id, meta.status, meta.stored_runs) == (f"nightly-{RUN_ID}", "complete", 100)
        assert len(store.load_runs(meta.id)) == 100
    finally:
        store.close()


def _truncated(store: Path, target: Path) -> Path:
    data = store.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    return target


@pytest.mark.slow
def test_a_damaged_store_is_skipped_for_an_older_one_and_never_uploaded(tmp_path: Path) -> None:
    work, bin_dir, artifacts = tmp_path / "repo", tmp_path / "bin", tmp_path / "artifacts"
    work.mkdir()
    artifacts.mkdir()
    suite = make_project(work)
    env = _nightly_env(work, suite, 1)
    fake_gh(bin_dir, None)
    for index in (1, 2, 3, 4):
        _shard(work, bin_dir, env, index, artifacts)
    assert _merge(work, bin_dir, env, artifacts) == 0
    good = tmp_path / "good.db"
    shutil.copy(work / env["EVALS_NIGHTLY_DIR"] / "results.db", good)
    damaged = _truncated(good, tmp_path / "damaged.db")

    # The merge job's check before the upload: a damaged history is not passed on.
    merge = load_workflow("evals-nightly.yml")["jobs"]["merge"]
    upload = next(s for s in merge["steps"] if s.get("name") == "Upload the store")
    assert "steps.check.outputs.upload == 'true'" in upload["if"]
    results = work / env["EVALS_NIGHTLY_DIR"] / "results.db"
    for store, expected in ((good, "upload=true"), (damaged, "upload=false")):
        shutil.copy(store, results)
        output = tmp_path / "github-output"
        output.write_text("")
        checked = run_step(
            step(merge, "check"), work, env | {"GITHUB_OUTPUT": str(output)}, bin_dir
        )
        assert checked.returncode == 0, checked.stderr
        assert output.read_text().strip() == expected

    # The pull request's fetch: the newest artifact is damaged, the one before is taken.
    pr = load_workflow("evals-pr.yml")
    pr_env = literal_env(pr["env"]) | github_env("pull_request", "refs/pull/3/merge")
    fake_gh(bin_dir, [damaged, good])
    fetched = run_step(step(pr["jobs"]["evals"], "nightly"), work, pr_env, bin_dir)
    assert fetched.returncode == 0, fetched.stderr
    assert "the store artifact of nightly run 4242 failed its check" in fetched.stdout
    assert "baseline store: the store artifact of nightly run 4241" in fetched.stdout
    fetched_store = work / pr_env["EVALS_NIGHTLY_DIR"] / "results.db"
    assert fetched_store.read_bytes() == good.read_bytes()
    fake_gh(bin_dir, [damaged])
    fetched = run_step(step(pr["jobs"]["evals"], "nightly"), work, pr_env, bin_dir)
    assert "baseline store: none usable; main's agent runs in this job" in fetched.stdout
    assert not fetched_store.exists()

    # The nightly's fetch of the previous history skips it alike.
    fetched = run_step(step(merge, "previous"), work, env, bin_dir)
    assert "history: none usable, starting a new store" in fetched.stdout


@pytest.mark.slow
def test_the_jobs_go_on_without_a_damaged_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evals.cli import main

    work = tmp_path / "repo"
    work.mkdir()
    make_project(work)
    monkeypatch.chdir(work)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    history = tmp_path / "history.db"
    out = tmp_path / "nightly"
    command = ["ci", "nightly", "evals-suite", "--store", str(history), "--out", str(out), "-q"]

    def in_ci(variables: dict[str, str]) -> None:
        for name, value in variables.items():
            monkeypatch.setenv(name, value)

    in_ci(github_env("schedule", "refs/heads/main"))
    assert main([*command, "--evaluation-id", "n1"]) == 0
    _truncated(history, history)

    # A pull request given the damaged store runs main's agent itself and says why.
    git(work, "checkout", "-q", "-b", "pr")
    in_ci(github_env("pull_request", "refs/pull/4/merge", GITHUB_BASE_REF="main"))
    ci = tmp_path / "ci"
    assert main(["ci", "pr", "evals-suite", "--store", str(history), "--out", str(ci), "-q"]) == 0
    comment = (ci / "comment.md").read_text(encoding="utf-8")
    assert "the baseline store failed its check and is not read" in comment
    assert "baseline: main's agent run in this job" in comment

    # The nightly sets the damaged history aside and starts a new one.
    git(work, "checkout", "-q", "main")
    in_ci(github_env("schedule", "refs/heads/main"))
    assert main([*command, "--evaluation-id", "n2"]) == 0
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "the history store failed its check" in summary and "set aside as" in summary
    assert len(list(tmp_path.glob("history.db.damaged-*"))) == 1
    store = open_store(str(history))
    try:
        assert [e.id for e in store.list_evaluations()] == ["n2"]
    finally:
        store.close()


def test_the_agents_job_can_write_nothing_and_the_publisher_runs_no_pull_request_code() -> None:
    pr = load_workflow("evals-pr.yml")
    assert set(pr["permissions"].values()) == {"read"}
    job = pr["jobs"]["evals"]
    assert "permissions" not in job
    checkouts = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout")]
    assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts)
    evaluate = next(s for s in job["steps"] if s.get("id") == "evals")
    assert not {"GH_TOKEN", "GITHUB_TOKEN"} & set(evaluate["env"])
    assert "github.token" not in json.dumps(evaluate)

    # The nightly's shards run main's agents with read access only; the merge job, which
    # runs no agent, publishes the nightly's check.
    nightly = load_workflow("evals-nightly.yml")
    assert nightly["permissions"] == {"contents": "read"}
    assert "permissions" not in nightly["jobs"]["shard"]
    assert nightly["jobs"]["merge"]["permissions"]["checks"] == "write"
    for job in nightly["jobs"].values():
        for entry in job["steps"]:
            if str(entry.get("uses", "")).startswith("actions/checkout"):
                assert entry["with"]["persist-credentials"] is False

    publisher = load_workflow("evals-pr-publish.yml")
    trigger = publisher[True]["workflow_run"]
    assert trigger == {"workflows": [pr["name"]], "types": ["completed"]}
    assert publisher["permissions"] == {
        "actions": "read",
        "checks": "write",
        "pull-requests": "write",
    }
    steps = publisher["jobs"]["publish"]["steps"]
    # Nothing is checked out and no shell step runs: the artifact is only read as data.
    assert all("run" not in s for s in steps)
    assert not any(str(s.get("uses", "")).startswith("actions/checkout") for s in steps)
    download = uses_step(publisher["jobs"]["publish"], "actions/download-artifact")
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"


def test_the_publisher_names_only_a_commit_of_the_pull_request_and_replaces_a_lost_verdict(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "publish"
    (folder / "evals-pr").mkdir(parents=True)
    head, other = "a" * 40, "b" * 40

    # No artifact (the job died installing): the comment still replaces the old verdict.
    calls = publish(folder, head, pr=5, comments=[])
    assert [c[0] for c in calls] == ["commits", "list", "create", "output"]
    body = calls[2][1]["body"]
    assert body.startswith("### ❌ evals pull request: ERROR: the job stopped before")

    # An artifact naming another pull request's commit is refused: nothing is published.
    (folder / "evals-pr" / "pull-request.json").write_text(json.dumps({"pr": 6, "sha": other}))
    (folder / "evals-pr" / "comment.md").write_text("### ✅ evals pull request: PASS\n")
    calls = publish(
        folder, other, pr=6, comments=[], commits={"6": [head]}, event="workflow_dispatch"
    )
    assert calls == [
        ["commits", {"owner": "team", "repo": "agent", "pull_number": 6, "per_page": 100}],
        ["failed", f"{other} is not a commit of pull request 6"],
    ]
    # A pull_request run whose artifact names another commit than GitHub's record.
    calls = publish(folder, head, pr=6, comments=[])
    assert calls == [["failed", f"the artifact names {other}, the run evaluated {head}"]]


def test_a_run_by_hand_evaluates_the_reviewed_commit_only(tmp_path: Path) -> None:
    work, bin_dir = tmp_path / "repo", tmp_path / "bin"
    work.mkdir()
    make_project(work)
    reviewed = git(work, "rev-parse", "HEAD")
    (work / "later.txt").write_text("pushed after the review\n")
    git(work, "add", "later.txt")
    git(work, "commit", "-q", "-m", "after review")
    elsewhere = subprocess.run(
        ["git", "commit-tree", "HEAD^{tree}", "-m", "not in the pull request"],
        cwd=work, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    fake_gh(bin_dir, None, base_ref="develop")
    job = load_workflow("evals-pr.yml")["jobs"]["evals"]
    env = github_env("workflow_dispatch", "refs/heads/main") | {"EVALS_PR": "12"}
    output = tmp_path / "github-output"

    for sha, expected in (("abc", "full 40-character"), (elsewhere, "is not a commit of")):
        output.write_text("")
        refused = run_step(
            step(job, "reviewed"),
            work,
            env | {"REVIEWED_SHA": sha, "GITHUB_OUTPUT": str(output)},
            bin_dir,
        )
        assert refused.returncode == 1 and expected in refused.stdout

    accepted = run_step(
        step(job, "reviewed"),
        work,
        env | {"REVIEWED_SHA": reviewed, "GITHUB_OUTPUT": str(output)},
        bin_dir,
    )
    assert accepted.returncode == 0, accepted.stderr
    assert git(work, "rev-parse", "HEAD") == reviewed
    assert output.read_text().strip() == "base=origin/develop"
