"""The workflows lint clean, and their shell steps work when run as written.

The nightly's shard and merge steps run on the demo suite (golden cases, one repeat, as a
team would set EVALS_NIGHTLY_RUN_ARGS), and the pull request's steps then gate a candidate
against that nightly's store artifact, fetched through a stand-in `gh`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from workflow_steps import (
    DEMO_SUITE,
    WORKFLOWS,
    fake_gh,
    literal_env,
    load_workflow,
    run_step,
    step,
)

from evals.store import open_store

ACTIONLINT = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which(
    "actionlint"
)


@pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is not installed (dev extra)")
def test_workflows_pass_actionlint() -> None:
    files = sorted(str(p) for p in WORKFLOWS.glob("evals-*.yml"))
    assert len(files) == 2
    result = subprocess.run([ACTIONLINT, *files], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    if ACTIONLINT is None:
        pytest.skip("actionlint is not installed (dev extra)")
    broken = tmp_path / "broken.yml"
    text = (WORKFLOWS / "evals-pr.yml").read_text(encoding="utf-8")
    broken.write_text(text.replace("runs-on: ubuntu-latest", "runs-on: [ubuntu-latest"), "utf-8")
    result = subprocess.run([ACTIONLINT, str(broken)], capture_output=True, text=True, check=False)
    assert result.returncode != 0


def _run_nightly(work: Path, bin_dir: Path) -> tuple[str, Path]:
    workflow = load_workflow("evals-nightly.yml")
    env = literal_env(workflow["env"]) | {
        "EVALS_SUITE": str(DEMO_SUITE),
        "EVALS_RUN_ARGS": "--tag golden --repeat 1",
        "EVALS_EVALUATION_ID": "nightly-7-1",
        "GITHUB_REF_NAME": "main",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_STEP_SUMMARY": str(work / "nightly-summary.md"),
    }
    shard_job = workflow["jobs"]["shard"]
    count = shard_job["env"]["SHARD_COUNT"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert len(shards) == count
    fake_gh(bin_dir, None)
    for index in shards:
        shard_env = env | {"SHARD_INDEX": str(index), "SHARD_COUNT": str(count)}
        result = run_step(step(shard_job, "shard"), work, shard_env, bin_dir)
        assert result.returncode == 0, result.stderr
    merge_job = workflow["jobs"]["merge"]
    for step_id in ("previous", "merge"):
        result = run_step(step(merge_job, step_id), work, env, bin_dir)
        assert result.returncode == 0, result.stderr
    store = work / env["EVALS_NIGHTLY_DIR"] / "results.db"
    return env["EVALS_EVALUATION_ID"], store


def test_nightly_then_pull_request_steps_on_the_demo_suite(tmp_path: Path) -> None:
    nightly_dir, pr_dir, bin_dir = tmp_path / "nightly", tmp_path / "pr", tmp_path / "bin"
    nightly_dir.mkdir()
    pr_dir.mkdir()
    nightly_id, nightly_store = _run_nightly(nightly_dir, bin_dir)

    stored = open_store(str(nightly_store))
    try:
        meta = stored.get_evaluation(nightly_id)
        runs = stored.load_runs(nightly_id)
    finally:
        stored.close()
    assert meta is not None and meta.status == "complete" and meta.shard is None
    assert (meta.environment, meta.git_branch) == ("nightly", "main")
    assert len(runs) == 8 * 2  # golden cases x agents, from four shards
    summary = (nightly_dir / "nightly-summary.md").read_text(encoding="utf-8")
    assert "Gate verdict (nightly)" in summary
    assert "No previous nightly evaluation" in summary
    gate = int((nightly_dir / ".evals/nightly/gate-exit-code").read_text())
    assert gate == (0 if meta.gates["passed"] else 1)

    workflow = load_workflow("evals-pr.yml")
    job = workflow["jobs"]["evals"]
    env = literal_env(workflow["env"]) | {
        "EVALS_SUITE": str(DEMO_SUITE),
        "EVALS_RUN_ARGS": "--repeat 1",
        "EVALS_EVALUATION_ID": "pr-12-99-1",
        "GITHUB_HEAD_REF": "feature/news",
        "GITHUB_SHA": "b" * 40,
        "GITHUB_STEP_SUMMARY": str(pr_dir / "step-summary.md"),
    }
    fake_gh(bin_dir, nightly_store)
    for step_id in ("baseline", "run", "compare"):
        result = run_step(step(job, step_id), pr_dir, env, bin_dir)
        assert result.returncode == 0, f"{step_id}: {result.stdout}\n{result.stderr}"
    gate = run_step(step(job, "gate"), pr_dir, env, bin_dir)

    ci = pr_dir / env["EVALS_CI_DIR"]
    summary = (pr_dir / "step-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## ")
    assert "Gate verdict (pr)" in summary
    assert f"{nightly_id}..{env['EVALS_EVALUATION_ID']}" in summary
    assert "compared with the latest nightly" in summary
    junit = ET.parse(ci / "junit.xml").getroot()
    suites = junit.findall("testsuite") if junit.tag == "testsuites" else [junit]
    failing_gates = [
        case
        for suite in suites
        if suite.get("name", "").endswith("/ gates")
        for case in suite.findall("testcase")
        if case.find("failure") is not None
    ]
    assert sum(len(suite.findall("testcase")) for suite in suites) > 0
    assert (ci / "report.html").read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype")
    verdict_failed = "Gate verdict (pr): FAIL" in summary
    assert gate.returncode == (1 if verdict_failed else 0)
    assert bool(failing_gates) == verdict_failed


def test_pull_request_without_a_nightly_gates_on_its_own_baseline(tmp_path: Path) -> None:
    workflow = load_workflow("evals-pr.yml")
    job = workflow["jobs"]["evals"]
    bin_dir = tmp_path / "bin"
    env = literal_env(workflow["env"]) | {
        "EVALS_SUITE": str(DEMO_SUITE),
        "EVALS_RUN_ARGS": "--repeat 1",
        "EVALS_EVALUATION_ID": "pr-1-1-1",
        "GITHUB_HEAD_REF": "feature/x",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
    }
    fake_gh(bin_dir, None)
    for step_id in ("baseline", "run", "compare"):
        result = run_step(step(job, step_id), tmp_path, env, bin_dir)
        assert result.returncode == 0, f"{step_id}: {result.stdout}\n{result.stderr}"
    summary = (tmp_path / "step-summary.md").read_text(encoding="utf-8")
    assert "gated on the run's baseline agent" in summary
    assert "evaluation `pr-1-1-1`" in summary
    gate = run_step(step(job, "gate"), tmp_path, env, bin_dir)
    assert gate.returncode == (1 if "Gate verdict (pr): FAIL" in summary else 0)
