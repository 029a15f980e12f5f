"""`evals ci pr --adaptive`: the pull-request job looks after every batch of repeats.

Main's agent runs in a checkout of the merge base (or its runs come from the nightly), the
pull request's in this one; each look compares them on the runs so far, keeps the gates it
decided and runs only the cases an undetermined gate reads. Checked here: the verdict of a
fixed job with fewer agent calls, the look of each decision in the comment, and a job
killed mid-way that resumes to exactly the runs of an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ci_suite import stored_runs
from git_project import (
    AGENT,
    AGENT_PATH,
    RESHUFFLED,
    TOPICS,
    as_scheduled_job,
    branch_with,
    git,
    github_env,
    make_project,
)

from evals.cli import main
from evals.model.summary import AdaptiveSummary
from evals.store import open_store

pytestmark = pytest.mark.slow

GOLDEN = len(TOPICS) - 1

# Breaks every case but the weather ones: a regression clear after a look or two.
BROKEN = AGENT.replace(
    '    verdict = "correct" if draw < 0.9 else "wrong"',
    '    verdict = "correct" if draw < 0.9 and topic == "weather" else "wrong"',
)

# The pull request's agent, slowed by SLOW_MS so that a job can be killed mid-look.
SLOW = RESHUFFLED.replace(
    "def call_api(prompt, options, context):\n",
    "def call_api(prompt, options, context):\n"
    "    import os, time\n"
    "    time.sleep(float(os.environ.get('SLOW_MS', '0')) / 1000)\n"
    "    if os.environ.get('CALLS_FILE'):\n"
    "        with open(os.environ['CALLS_FILE'], 'a') as calls:\n"
    "            calls.write('call\\n')\n",
)


def _ci_variables(branch: str) -> dict[str, str]:
    return github_env(
        "pull_request",
        "refs/pull/7/merge",
        GITHUB_BASE_REF="main",
        GITHUB_HEAD_REF=branch,
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose main has a stored nightly (4 repeats), the working directory."""
    repo = tmp_path / "repo"
    repo.mkdir()
    make_project(repo)
    as_scheduled_job(repo, monkeypatch)
    history = tmp_path / "history.db"
    nightly = ["ci", "nightly", "evals-suite", "--store", str(history), "--quiet"]
    assert main([*nightly, "--out", str(repo / ".evals" / "nightly")]) == 0
    return repo


def _pull_request(
    project: Path, monkeypatch: pytest.MonkeyPatch, branch: str, out: str, *extra: str
) -> tuple[int, dict, str]:
    git(project, "checkout", "-q", branch)
    for name, value in _ci_variables(branch).items():
        monkeypatch.setenv(name, value)
    folder = project / ".evals" / out
    history = project.parent / "history.db"
    command = ["ci", "pr", "evals-suite", "--store", str(history), "--out", str(folder)]
    code = main([*command, "--quiet", *extra])
    outcome = json.loads((folder / "ci.json").read_text(encoding="utf-8"))
    comment = (folder / "comment.md").read_text(encoding="utf-8")
    return code, outcome, comment


def _runs(scratch: Path) -> dict[str, list[tuple]]:
    """Every evaluation's runs in a scratch store: key, seed, output, cache hit, look."""
    store = open_store(str(scratch))
    try:
        return {
            e.id: sorted(
                (
                    r.key.as_tuple(),
                    r.seed,
                    r.response.output,
                    bool(r.response.cached),
                    r.metadata.get("look"),
                )
                for r in store.load_runs(e.id)
            )
            for e in store.list_evaluations(limit=None)
        }
    finally:
        store.close()


def _agent_calls(scratch: Path) -> int:
    """Runs the job's agents answered themselves: neither the nightly's nor the cache's."""
    return sum(not cached for runs in _runs(scratch).values() for *_, cached, _ in runs)


def test_the_adaptive_job_fails_a_regression_with_fewer_agent_calls_than_fixed_repeats(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    branch_with(project, "regression", {AGENT_PATH: BROKEN})

    fixed_code, fixed, _ = _pull_request(
        project, monkeypatch, "regression", "fixed", "--repeat", "8"
    )
    code, outcome, comment = _pull_request(
        project, monkeypatch, "regression", "adaptive", "--adaptive", "8", "--look-every", "2"
    )

    assert (code, outcome["verdict"]) == (fixed_code, fixed["verdict"]) == (1, "fail")
    fixed_gates = {g["name"]: g["status"] for g in fixed["results"][0]["gates"]["gates"]}
    gates = {g["name"]: g for g in outcome["results"][0]["gates"]["gates"]}
    assert gates["regression"]["status"] == fixed_gates["regression"] == "fail"
    summary = AdaptiveSummary.from_dict(outcome["results"][0]["gates"]["adaptive"])
    regression = next(g for g in summary.decided if g.name == "regression")
    assert f"decided at look {regression.look}" in gates["regression"]["reason"]
    assert summary.fixed_runs == 2 * 8 * GOLDEN
    assert summary.runs == summary.looks[-1].runs < summary.fixed_runs
    assert f"regression fail at look {regression.look} after {regression.runs} runs" in comment
    assert f"{summary.saved} agent calls saved" in comment
    assert "× up to" in comment
    # what happened to main's side, in one line above the fold
    guard = outcome["results"][0]["gates"]["reuse"]
    assert (
        f"baseline agent: {guard['reused']} stored run(s) reused, {guard['guard']} re-run"
        in (comment.split("<details>", 1)[0])
    )
    fixed_calls = _agent_calls(project / ".evals" / "fixed" / "pr.db")
    adaptive_calls = _agent_calls(project / ".evals" / "adaptive" / "pr.db")
    # The fixed job calls the head's agent 8 times per case and main's for the 4 repeats
    # the nightly lacks; the adaptive job stops at a look the nightly covers.
    assert fixed_calls == 8 * GOLDEN + 4 * GOLDEN
    assert adaptive_calls == summary.looks[-1].repeats * GOLDEN < fixed_calls
    looks = {
        look
        for runs in _runs(project / ".evals" / "adaptive" / "pr.db").values()
        for *_, look in runs
    }
    assert looks == {look.look for look in summary.looks}


def test_adaptive_refuses_fixed_repeats_and_stages(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    branch_with(project, "regression", {AGENT_PATH: BROKEN})
    for extra in (["--repeat", "4"], ["--until-decided", "2,4"], ["--effect", "0.2"]):
        git(project, "checkout", "-q", "regression")
        command = ["ci", "pr", "evals-suite", "--out", str(project / ".evals" / "x")]
        assert main([*command, "--adaptive", "6", *extra]) == 2
        assert "--adaptive sets the repeats of each look itself" in capsys.readouterr().err


def test_a_killed_adaptive_job_resumes_to_the_uninterrupted_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = branch_with(project, "reshuffled", {AGENT_PATH: SLOW})
    # Judging the pass side too (--pass-reach) keeps the job running past its second look.
    adaptive = ["--adaptive", "6", "--look-every", "2", "--pass-reach", "0"]
    whole_code, whole, _ = _pull_request(project, monkeypatch, "reshuffled", "whole", *adaptive)
    summary = AdaptiveSummary.from_dict(whole["results"][0]["gates"]["adaptive"])
    # The job runs past the second look, so a kill in it leaves the later looks to do.
    assert len(summary.looks) == 3

    out = project / ".evals" / "killed"
    scratch = out / "pr.db"
    history = project.parent / "history.db"
    command = [sys.executable, "-m", "evals", "ci", "pr", "evals-suite", "--store", str(history)]
    command += ["--out", str(out), "--quiet", *adaptive]
    env = {**os.environ, **_ci_variables("reshuffled"), "SLOW_MS": "40"}
    process = subprocess.Popen(command, env=env, cwd=project, start_new_session=True)
    head_id = f"pr-7-{head[:10]}"
    deadline = time.monotonic() + 120
    while stored_runs(scratch, head_id) < 3 * GOLDEN and time.monotonic() < deadline:
        assert process.poll() is None, "the job ended before it could be killed"
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    before = stored_runs(scratch, head_id)
    assert 3 * GOLDEN <= before < summary.runs

    calls = project.parent / "calls.txt"
    resumed = subprocess.run(
        [*command, "--resume"],
        env={**env, "SLOW_MS": "0", "CALLS_FILE": str(calls)},
        cwd=project,
        timeout=300,
    )
    assert resumed.returncode == whole_code
    # The resumed job called the pull request's agent only for the runs the kill lost.
    whole_head = len(_runs(project / ".evals" / "whole" / "pr.db")[head_id])
    assert len(calls.read_text(encoding="utf-8").splitlines()) == whole_head - before
    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    assert outcome["verdict"] == whole["verdict"]
    assert outcome["results"][0]["gates"]["adaptive"] == whole["results"][0]["gates"]["adaptive"]
    assert _runs(scratch) == _runs(project / ".evals" / "whole" / "pr.db")


def test_the_pr_environments_budget_and_the_flag_cap_the_adaptive_job(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = project / "evals-suite" / "promptfooconfig.yaml"
    capped = suite.read_text(encoding="utf-8").replace(
        "pr: {tags: [golden], repeat: 4}", "pr: {tags: [golden], repeat: 4, budget_runs: 150}"
    )
    branch_with(
        project, "capped", {AGENT_PATH: RESHUFFLED, "evals-suite/promptfooconfig.yaml": capped}
    )
    look = 2 * 2 * GOLDEN  # one look: 2 repeats of every case on both sides

    _, outcome, comment = _pull_request(project, monkeypatch, "capped", "env", "--adaptive", "8")
    summary = AdaptiveSummary.from_dict(outcome["results"][0]["gates"]["adaptive"])
    assert summary.runs == look <= 150 < 2 * look
    assert f"the next look's {look} runs would take the {look} runs so far past" in comment
    assert "--budget-runs 150" in summary.stop_reason

    # Judging the pass side too (--pass-reach) keeps the job running into the cap.
    _, outcome, comment = _pull_request(
        project,
        monkeypatch,
        "capped",
        "flag",
        "--adaptive",
        "8",
        "--budget-runs",
        "200",
        "--pass-reach",
        "0",
    )
    summary = AdaptiveSummary.from_dict(outcome["results"][0]["gates"]["adaptive"])
    assert look < summary.runs <= 200
    assert "past --budget-runs 200" in summary.stop_reason
    assert len(summary.looks) == 2


def test_each_compared_agent_is_decided_on_its_own_and_a_decided_one_runs_no_further(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "two"
    repo.mkdir()
    suite = make_project(repo)
    as_scheduled_job(repo, monkeypatch)
    (repo / "evals-suite" / "other.py").write_text(AGENT, encoding="utf-8")
    text = suite.read_text(encoding="utf-8").replace(
        '  - {id: "file://agent.py", label: agent}\n',
        '  - {id: "file://agent.py", label: agent}\n  - {id: "file://other.py", label: other}\n',
    )
    suite.write_text(text, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a second agent")
    history = tmp_path / "history.db"
    nightly = ["ci", "nightly", "evals-suite", "--store", str(history), "--quiet"]
    assert main([*nightly, "--out", str(repo / ".evals" / "nightly")]) in (0, 1)
    head = branch_with(repo, "both", {AGENT_PATH: BROKEN, "evals-suite/other.py": RESHUFFLED})

    code, outcome, comment = _pull_request(repo, monkeypatch, "both", "both", "--adaptive", "6")

    assert code == 1 and outcome["verdict"] == "fail"
    summaries = {
        r["agents"][-1]: AdaptiveSummary.from_dict(r["gates"]["adaptive"])
        for r in outcome["results"]
    }
    broken, other = summaries["agent@head"], summaries["other@head"]
    assert next(g for g in broken.decided if g.name == "regression").look == 1
    assert len(other.looks) == len(broken.looks) > 1  # the job went on for `other`
    assert "gates decided for agent: regression fail at look 1" in comment
    assert "; for other: " in comment
    # `agent` failed at look 1; `other` ran on until none of its gates could still be
    # decided (its error rate, no errored run, cannot fail by the last look)
    assert "stopped because no undetermined gate can still be decided by the last look" in comment
    runs = _runs(repo / ".evals" / "both" / "pr.db")[f"pr-7-{head[:10]}"]
    repeats = {
        agent: {key[3] for key, *_ in runs if key[2] == agent} for agent in ("agent", "other")
    }
    assert repeats["agent"] == {0, 1}
    assert repeats["other"] == set(range(other.looks[-1].repeats))
