"""The pull-request loop end to end, in a throwaway git project.

Main holds a suite and an agent; the nightly command stores main's baseline; branches
change `agent.py` harmlessly or with a regression on one tag, and the pull-request
command compares each with main: verdicts, exit codes, the comment, and that the
pull-request job wrote no baseline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from git_project import (
    AGENT,
    AGENT_PATH,
    HARMLESS,
    REGRESSION,
    RESHUFFLED,
    TOPICS,
    branch_with,
    git,
    github_env,
    make_project,
    suite_text,
)

from evals.cli import main
from evals.reports.ci import COMMENT_MARKER
from evals.store import open_store

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project's repository, the working directory, with no CI variables set."""
    repo = tmp_path / "repo"
    repo.mkdir()
    make_project(repo)
    monkeypatch.chdir(repo)
    for name in (
        "GITHUB_EVENT_NAME",
        "GITHUB_REF",
        "GITHUB_REF_NAME",
        "GITHUB_HEAD_REF",
        "GITHUB_BASE_REF",
        "GITHUB_SHA",
        "GITHUB_STEP_SUMMARY",
        "EVALS_STORE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    return repo


def _in_ci(monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


def _nightly(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    history: Path,
    evaluation_id: str = "nightly-1",
    *extra: str,
) -> str:
    """`evals ci nightly` on main as the schedule runs it; its evaluation id."""
    git(project, "checkout", "-q", "main")
    _in_ci(monkeypatch, github_env("schedule", "refs/heads/main"))
    out = project / ".evals" / evaluation_id
    command = ["ci", "nightly", "evals-suite", "--store", str(history), "--out", str(out)]
    code = main([*command, "--evaluation-id", evaluation_id, "--quiet", *extra])
    assert code == 0
    return evaluation_id


def _nightly_then_branch(
    project: Path, monkeypatch: pytest.MonkeyPatch, branch: str, agent: str
) -> Path:
    """Main's nightly in a history store, then a branch whose agent is `agent`."""
    history = project.parent / "history.db"
    _nightly(project, monkeypatch, history)
    branch_with(project, branch, {AGENT_PATH: agent})
    return history


def _pull_request(
    project: Path, monkeypatch: pytest.MonkeyPatch, history: Path, branch: str, *extra: str
) -> tuple[int, dict, str]:
    git(project, "checkout", "-q", branch)
    _in_ci(
        monkeypatch,
        github_env(
            "pull_request",
            "refs/pull/7/merge",
            GITHUB_BASE_REF="main",
            GITHUB_HEAD_REF=branch,
            GITHUB_STEP_SUMMARY=str(project / ".evals" / f"summary-{branch}.md"),
        ),
    )
    out = project / ".evals" / f"ci-{branch}"
    code = main(
        ["ci", "pr", "evals-suite", "--store", str(history), "--out", str(out), "--quiet", *extra]
    )
    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    comment = (out / "comment.md").read_text(encoding="utf-8")
    return code, outcome, comment


def _evaluations(history: Path) -> list[tuple[str, str | None, str | None, str]]:
    store = open_store(str(history))
    try:
        return [
            (e.id, e.environment, e.git_branch, e.status)
            for e in store.list_evaluations(limit=None)
        ]
    finally:
        store.close()


def test_a_world_that_moved_since_the_nightly_runs_mains_agent_fresh(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Main's code is unchanged since the nightly but the API its agent calls now answers
    otherwise: the drift guard's fresh runs differ from the nightly's, so the nightly's
    runs are not used and main's agent runs fresh, as the comment says; the pull request
    is compared with main as it answers today."""
    history = _nightly_then_branch(project, monkeypatch, "harmless", HARMLESS)
    monkeypatch.setenv("CALL_API_WORLD", "moved")
    code, outcome, comment = _pull_request(project, monkeypatch, history, "harmless")
    assert "drift shown, so the baseline ran fresh" in comment, comment
    assert "no agent called for it" not in comment
    [result] = outcome["results"]
    assert result["gates"]["reuse"]["fell_back"] is True
    gates = {g["name"]: g["status"] for g in result["gates"]["gates"]}
    assert gates["regression"] != "fail" and code in (0, 1), comment


def test_agent_changes_are_compared_with_mains_agent_and_never_stored_as_baselines(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = project.parent / "history.db"
    nightly = _nightly(project, monkeypatch, history)
    stored = _evaluations(history)
    assert stored == [(nightly, "nightly", "main", "complete")]
    branch_with(project, "harmless", {AGENT_PATH: HARMLESS})
    branch_with(project, "regression", {AGENT_PATH: REGRESSION})

    code, outcome, comment = _pull_request(project, monkeypatch, history, "harmless")

    assert (code, outcome["verdict"]) == (0, "pass")
    assert comment.rstrip().endswith(COMMENT_MARKER)
    assert "evals pull request: PASS" in comment
    assert "changed agent(s): agent" in comment
    assert f"baseline: the stored runs of nightly `{nightly}`" in comment
    assert "no agent called for it" in comment
    assert "**agent@base** (baseline) vs **agent@head** (candidate)" in comment
    assert "Regressions" not in comment
    [result] = outcome["results"]
    assert result["agents"] == ["agent@base", "agent@head"]
    gates = {g["name"]: g["status"] for g in result["gates"]["gates"]}
    # The nightly's runs stand in for main after the drift guard found no drift: half the
    # budget is kept against a drift it missed, so the pass may stay undetermined.
    assert gates["regression"] in ("pass", "undetermined")
    assert "no drift shown" in comment
    # one line says what happened to main's side, one what the reuse saved
    reuse = result["gates"]["reuse"]
    assert (
        f"baseline agent: {reuse['reused']} stored run(s) reused, {reuse['guard']} re-run "
        "fresh as a drift check: no drift" in comment
    )
    runs = reuse["reused"]  # the nightly stored every run of main's the comparison reads
    assert f"agent calls: {runs + reuse['guard']} against {2 * runs} with both sides" in comment
    summary = (project / ".evals" / "summary-harmless.md").read_text(encoding="utf-8")
    assert "evals pull request: PASS" in summary

    code, outcome, comment = _pull_request(project, monkeypatch, history, "regression")

    assert (code, outcome["verdict"]) == (1, "fail")
    assert "evals pull request: FAIL" in comment
    assert "### Regressions of agent@head" in comment
    regressed = comment.split("### Regressions of agent@head", 1)[1].split("###", 1)[0]
    assert "tag `news`" in regressed
    assert "prices" not in regressed and "weather" not in regressed
    gates = {g["name"]: g["status"] for g in outcome["results"][0]["gates"]["gates"]}
    assert gates["regression"] == "fail"
    assert "this job wrote no baseline" in comment

    assert _evaluations(history) == stored
    scratch = project / ".evals" / "ci-regression" / "pr.db"
    head = git(project, "rev-parse", "HEAD")[:10]
    assert _evaluations(scratch) == [(f"pr-7-{head}", "pr", "regression", "complete")]


# Seven P0 cases about billing that main's agent always gets right.
BILLING = "".join(
    f"  - description: billing case {i}\n"
    f"    vars: {{question: 'b{i}', topic: billing}}\n"
    f"    metadata: {{tags: [billing, golden], priority: P0}}\n"
    for i in range(7)
)
ANSWER = '    verdict = "correct" if draw < 0.9 else "wrong"\n'


def test_a_p0_case_that_breaks_fails_the_pull_request_while_the_nightly_answers_for_main(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A P0 case main's agent answers 5/5 answers 0/5 on the pull request, while the
    nightly's runs answer for main on the other cases: main's runs of the P0 cases are run
    fresh in the base checkout, so the P0 gate keeps its whole share of the budget and
    fails the pull request, as it would against a fresh baseline."""
    suite = project / "evals-suite" / "promptfooconfig.yaml"
    text = suite_text() + BILLING
    text = text.replace("repeat: 4}", "repeat: 5}")
    suite.write_text(text, encoding="utf-8")
    main_agent = AGENT.replace(
        ANSWER, ANSWER + '    if topic == "billing":\n        verdict = "correct"\n'
    )
    (project / AGENT_PATH).write_text(main_agent, encoding="utf-8")
    git(project, "commit", "-q", "-am", "billing cases, P0")
    history = project.parent / "history.db"
    nightly = _nightly(project, monkeypatch, history)
    broken = main_agent.replace(
        '        verdict = "correct"\n',
        '        verdict = "wrong" if context["vars"]["question"] == "b0" else "correct"\n',
    )
    branch_with(project, "p0-broken", {AGENT_PATH: broken})

    code, outcome, comment = _pull_request(project, monkeypatch, history, "p0-broken")

    [result] = outcome["results"]
    gates = {g["name"]: g["status"] for g in result["gates"]["gates"]}
    assert gates["p0_regressions"] == "fail", comment
    assert (code, outcome["verdict"]) == (1, "fail")
    reuse = result["gates"]["reuse"]
    assert reuse["fell_back"] is False
    assert reuse["fresh_gates"] == ["p0_regressions"]
    assert f"baseline: the stored runs of nightly `{nightly}`" in comment
    assert "fresh as a drift check (P0 cases in full): no drift" in comment
    # every run of the seven P0 cases, and the guard's share of the others, ran fresh
    golden = len(TOPICS) - 1
    assert reuse["guard"] == 7 * 5 + golden
    assert reuse["reused"] == golden * 5
    runs = (golden + 7) * 5
    assert f"agent calls: {runs + reuse['guard']} against {2 * runs} with both sides" in comment


def test_fresh_baseline_runs_mains_agent_without_the_nightlys_runs_or_responses(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = _nightly_then_branch(project, monkeypatch, "harmless", HARMLESS)

    code, outcome, comment = _pull_request(
        project, monkeypatch, history, "harmless", "--fresh-baseline"
    )

    assert (code, outcome["verdict"]) == (0, "pass")
    assert "baseline: main's agent run fresh (--fresh-baseline)" in comment
    assert "without the nightly's stored runs or responses" in comment
    assert "no agent called for it" not in comment
    [result] = outcome["results"]
    assert result["gates"]["reuse"] is None
    runs = (len(TOPICS) - 1) * 4
    assert f"agent calls: {2 * runs} against {2 * runs} with both sides run fresh" in comment


def test_mains_agent_runs_in_the_job_through_the_primed_cache_when_the_nightly_falls_short(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = _nightly_then_branch(project, monkeypatch, "harmless", HARMLESS)

    code, outcome, comment = _pull_request(
        project, monkeypatch, history, "harmless", "--repeat", "6"
    )

    assert code == 0
    golden = len(TOPICS) - 1
    assert "baseline: main's agent run in this job, primed with" in comment
    assert f"{golden * 4} of {golden * 6} runs answered from the cache" in comment
    assert (
        "the nightly stored 4 repeat(s) of main's agent and this job needed 6: main's agent "
        "ran here for the rest; a nightly of at least 6 repeats" in comment
    )
    assert outcome["verdict"] == "pass"
    head = git(project, "rev-parse", "HEAD")[:10]
    scratch = _evaluations(project / ".evals" / "ci-harmless" / "pr.db")
    assert sorted(scratch) == [
        (f"pr-7-{head}", "pr", "harmless", "complete"),
        (f"pr-7-{head}-base", "pr", "harmless", "complete"),
    ]
    assert _evaluations(history) == [("nightly-1", "nightly", "main", "complete")]


def test_the_nightly_refuses_a_pull_request_event_and_a_new_suite_gates_itself(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    history = project.parent / "history.db"
    _in_ci(monkeypatch, github_env("pull_request", "refs/pull/3/merge"))
    code = main(["ci", "nightly", "evals-suite", "--store", str(history), "--quiet"])
    assert code == 2
    assert "does not run on pull_request events" in capsys.readouterr().err
    assert not history.exists()

    git(project, "checkout", "-q", "-b", "second-suite")
    second = project / "second"
    second.mkdir()
    (second / "agent.py").write_text(AGENT, encoding="utf-8")
    (second / "promptfooconfig.yaml").write_text(
        (project / "evals-suite" / "promptfooconfig.yaml").read_text(encoding="utf-8"), "utf-8"
    )
    git(project, "add", "second")
    git(project, "commit", "-q", "-m", "a second suite")
    _in_ci(monkeypatch, github_env("pull_request", "refs/pull/3/merge", GITHUB_BASE_REF="main"))
    out = project / ".evals" / "second"
    code = main(["ci", "pr", "second", "--out", str(out), "--quiet"])
    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    assert code == (0 if outcome["verdict"] != "fail" else 1)
    assert any("new in this pull request" in note for note in outcome["notes"])


def test_without_a_stored_nightly_mains_agent_runs_in_the_job(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    branch_with(project, "regression", {AGENT_PATH: REGRESSION})
    missing = project.parent / "no-nightly-yet.db"
    team_store = project.parent / "team-store.db"
    monkeypatch.setenv("EVALS_STORE_URL", str(team_store))

    code, outcome, comment = _pull_request(project, monkeypatch, missing, "regression")

    assert "EVALS_STORE_URL is set in a pull-request job" in capsys.readouterr().err
    assert not team_store.exists()

    assert (code, outcome["verdict"]) == (1, "fail")
    assert "baseline: main's agent run in this job, no stored nightly to prime the cache" in comment
    assert f"no store at {missing}" in comment
    assert not missing.exists()


def test_staged_until_decided_reuses_the_nightly_runs_mains_agent_then_stops_early(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = _nightly_then_branch(project, monkeypatch, "reshuffled", RESHUFFLED)

    code, outcome, comment = _pull_request(
        project, monkeypatch, history, "reshuffled", "--until-decided", "2,5,6"
    )

    # No loss beyond the tolerance shown: a pull request passes what it cannot decide,
    # so once no open gate can fail by the last stage, the job stops (here after 5 repeats).
    assert (code, outcome["verdict"]) == (0, "pass")
    assert (
        "staged until decided: 2 of 3 stage(s) (2 repeat(s): undetermined; 5 repeat(s): "
        "undetermined); no open gate could still fail by the last stage" in comment
    )
    golden = len(TOPICS) - 1
    assert f"primed with {len(TOPICS) * 4} stored response(s)" in comment
    assert f"{golden * 4} of {golden * 5} runs answered from the cache" in comment
    assert "undetermined gate(s): regression (agent@head)" in comment
    assert "they do not fail the build" in comment
    store = open_store(str(project / ".evals" / "ci-reshuffled" / "pr.db"))
    try:
        runs = {e.id: len(store.load_runs(e.id)) for e in store.list_evaluations()}
    finally:
        store.close()
    assert sorted(runs.values()) == [golden * 5, golden * 5]


def test_the_night_after_an_agent_change_compares_with_the_night_before(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = project.parent / "history.db"
    _nightly(project, monkeypatch, history)
    (project / AGENT_PATH).write_text(HARMLESS, encoding="utf-8")
    git(project, "commit", "-q", "-am", "a comment in the agent")

    _nightly(project, monkeypatch, history, "nightly-2", "--keep", "1")

    out = project / ".evals" / "nightly-2"
    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    assert "compared with the baseline `nightly-1` (the same suite version)" in (outcome["notes"])
    assert [r["agents"] for r in outcome["results"]] == [
        ["agent"],
        ["agent@baseline", "agent@tonight"],
    ]
    drift = outcome["results"][1]["gates"]
    assert drift["verdict"] == "pass"
    assert any(w.startswith("agent agent: changed (fingerprint") for w in drift["warnings"])
    assert "history kept to the newest 1 evaluation(s) per suite (1 pruned)" in outcome["notes"]
    assert _evaluations(history) == [("nightly-2", "nightly", "main", "complete")]


def test_the_pull_request_gate_honours_the_team_stores_quarantines(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evals.suite import load_suite

    history = _nightly_then_branch(project, monkeypatch, "regression", REGRESSION)
    code, outcome, _ = _pull_request(project, monkeypatch, history, "regression")
    assert (code, outcome["verdict"]) == (1, "fail")

    suite = load_suite(project / "evals-suite")
    news = [case.id for case in suite.cases if "news" in case.tags]
    for case_id in news:
        added = main(
            [
                "triage",
                "add",
                "quarantine",
                "--suite",
                suite.suite_id,
                "--case",
                case_id,
                "--env",
                "pr",
                "--until",
                "7d",
                "--reason",
                "news feed fix in progress",
                "--by",
                "lead@example.com",
                "--store",
                str(history),
            ]
        )
        assert added == 0
    code, outcome, comment = _pull_request(project, monkeypatch, history, "regression")

    gates = {g["name"]: g["status"] for g in outcome["results"][0]["gates"]["gates"]}
    assert gates["regression"] != "fail", comment
    assert code == 0, comment
    assert f"{len(news)} case(s) quarantined" in comment
