"""A baseline is chosen, never inherited.

A nightly that regressed against the baseline is stored and reported but does not become
the baseline; the nights after it compare with the baseline, not with it; a triager's
`evals baseline accept` makes it the baseline, recorded in the triage log with who and
why; `evals history` and `evals baseline show` say which evaluation is the baseline and
why.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest
from git_project import AGENT_PATH, REGRESSION, git, github_env, make_project

from evals.ci.nightly import baseline_decision
from evals.cli import main
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.gates import GateConfig
from evals.model.suite import Suite
from evals.model.summary import GateReport, GateResult, Summary
from evals.store import open_store

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    make_project(repo)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    monkeypatch.delenv("EVALS_TRIAGE_ACTOR", raising=False)
    for name, value in github_env("schedule", "refs/heads/main").items():
        monkeypatch.setenv(name, value)
    return repo


def _nightly(repo: Path, history: Path, evaluation_id: str) -> tuple[int, dict]:
    out = repo / ".evals" / evaluation_id
    code = main(
        ["ci", "nightly", "evals-suite", "--store", str(history), "--out", str(out), "-q",
         "--evaluation-id", evaluation_id]
    )  # fmt: skip
    return code, json.loads((out / "ci.json").read_text(encoding="utf-8"))


def _baseline(history: Path) -> str:
    store = open_store(str(history))
    try:
        return store.baselines("evals-suite")[0].id
    finally:
        store.close()


def test_a_regressed_nightly_is_not_the_baseline_until_a_triager_accepts_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = project.parent / "history.db"
    code, first = _nightly(project, history, "night-1")
    assert code == 0
    assert first["notes"][0] == (
        "baseline: tonight's `night-1` is the baseline from now on (its gates passed; there "
        "was no baseline to compare with)"
    )

    # A person's comment on a run of a news case: the next summary shows it beside the drop.
    assert main(["triage", "annotate", "comment", "--evaluation", "night-1", "--case",
                 "case-0-about-news", "--agent", "agent", "--reason", "the feed is being rewritten",
                 "--by", "alice", "--store", str(history)]) == 0  # fmt: skip

    # The regression on the news tag is merged; the next nightly sees it.
    (project / AGENT_PATH).write_text(REGRESSION, encoding="utf-8")
    git(project, "commit", "-qam", "merge: the news feed rewrite")
    code, second = _nightly(project, history, "night-2")
    summary = (project / ".evals" / "night-2" / "summary.md").read_text(encoding="utf-8")
    assert "- case `case-0-about-news` -" in summary
    assert "pp — the feed is being rewritten — alice, " in summary
    # Failed, or undetermined on a 30-point drop (which warns): either way not the baseline.
    assert (code, second["verdict"]) in ((1, "fail"), (0, "undetermined"))
    decision = second["notes"][0]
    assert decision.startswith("baseline: tonight's `night-2` is NOT the baseline (")
    assert (
        "it regressed against the baseline `night-1`: regression" in decision
        or "a drop against the baseline `night-1` beyond the tolerance stayed undetermined: "
        "regression"
        in decision
    )
    assert "`night-1` stays the baseline" in decision
    assert "`evals baseline accept night-2 --reason ...` makes it the baseline" in decision
    assert _baseline(history) == "night-1"

    # The night after compares with the baseline, not with the regressed night.
    code, third = _nightly(project, history, "night-3")
    assert third["notes"][0].startswith("baseline: tonight's `night-3` is NOT the baseline (")
    assert "compared with the baseline `night-1` (the same suite version)" in third["notes"]
    assert _baseline(history) == "night-1"

    capsys.readouterr()
    assert main(["history", "--store", str(history)]) == 0
    listed = {
        line.split()[0]: line for line in capsys.readouterr().out.splitlines() if "night-" in line
    }
    assert "★ baseline: its gates passed" in listed["night-1"]
    assert "not: " in listed["night-2"] and "against the baseline `night-1`" in listed["night-2"]

    accepted = main(
        ["baseline", "accept", "night-2", "--reason", "news moved to the feed team's agent",
         "--by", "lead@example.com", "--store", str(history)]
    )  # fmt: skip
    assert accepted == 0
    assert _baseline(history) == "night-2"
    capsys.readouterr()
    assert main(["baseline", "show", "--store", str(history)]) == 0
    shown = capsys.readouterr().out
    assert (
        "evals-suite on main: baseline night-2 (accepted by lead@example.com: news moved to "
        "the feed team's agent)"
    ) in shown
    assert "newest nightly night-3 is not the baseline: " in shown
    capsys.readouterr()
    assert main(["triage", "list", "--store", str(history)]) == 0
    log = capsys.readouterr().out
    assert "acknowledge" in log and "lead@example.com" in log and "news moved" in log

    # Compared with the accepted baseline, tonight is unchanged: it becomes the baseline.
    code, fourth = _nightly(project, history, "night-4")
    assert code == 0
    assert fourth["notes"][0].startswith("baseline: tonight's `night-4` is the baseline")
    assert "against the baseline `night-2`" in fourth["notes"][0]
    assert _baseline(history) == "night-4"


def test_only_a_complete_nightly_can_be_accepted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = project.parent / "history.db"
    assert main(["run", "evals-suite", "--store", str(history), "--evaluation-id", "pr-1",
                 "--shard", "1/2", "-q", "--no-progress"]) in (0, 1)  # fmt: skip
    capsys.readouterr()
    code = main(["baseline", "accept", "pr-1", "--reason", "x", "--store", str(history)])
    assert code == 2
    assert (
        "cannot be accepted as the baseline (never a baseline: shard 1/2)"
        in capsys.readouterr().err
    )
    code = main(["baseline", "accept", "nope", "--reason", "x", "--store", str(history)])
    assert code == 2


def _gate(name: str, status: str, measured: float, threshold: float = -0.1) -> GateResult:
    return GateResult(name, status, threshold, measured, None, "")  # type: ignore[arg-type]


def nightly_result(gates: GateReport) -> EvaluationResult:
    """What the decision reads of a nightly or of its comparison with baseline `n1`."""
    meta = EvaluationMeta(
        id="n2",
        suite_id="suite",
        suite_version=None,
        fingerprint="f",
        description="",
        environment="nightly",
        git_commit=None,
        git_branch="main",
        started_at=0.0,
        status="complete",
        config={"baseline_evaluation": "n1"},
    )
    return EvaluationResult(
        cast(Suite, None), meta, [], cast(Summary, None), gates, GateConfig(), 1
    )


def test_a_drop_beyond_the_tolerance_that_stayed_undetermined_keeps_the_previous_baseline() -> None:
    tonight = nightly_result(GateReport([_gate("min_pass_rate", "pass", 0.9, 0.5)]))
    against = nightly_result(GateReport([_gate("regression[units]", "undetermined", -0.543)]))
    chosen, reason = baseline_decision(tonight, against)
    assert not chosen
    assert reason == (
        "a drop against the baseline `n1` beyond the tolerance stayed undetermined: "
        "regression[units] -54.3 pp"
    )
    within = nightly_result(GateReport([_gate("regression", "undetermined", -0.04)]))
    assert baseline_decision(tonight, within) == (
        True,
        "its gates passed and it did not regress against the baseline `n1`",
    )
    failed_own = nightly_result(GateReport([_gate("min_pass_rate", "fail", 0.3, 0.5)]))
    assert baseline_decision(failed_own, within) == (
        False,
        "its own gates did not pass (min_pass_rate)",
    )
    incomplete = nightly_result(GateReport([]))
    incomplete.meta = replace(incomplete.meta, status="incomplete")
    assert baseline_decision(incomplete, None) == (False, "it is incomplete")


def test_evals_run_with_the_nightly_environment_follows_the_nightly_baseline_rule(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A nightly stored by `evals run --env nightly` becomes the baseline by the rule of
    `evals ci nightly`: a regression whose own gates pass stays out, the baseline before it
    stays the baseline, and the run says so."""
    history = project.parent / "history.db"

    def run(evaluation_id: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["run", "evals-suite", "--env", "nightly", "--store", str(history),
                     "--evaluation-id", evaluation_id, "--no-progress"])  # fmt: skip
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    code, said = run("run-1")
    assert code == 0
    assert "baseline: nightly evaluation `run-1` is the baseline from now on" in said
    assert _baseline(history) == "run-1"

    (project / AGENT_PATH).write_text(REGRESSION, encoding="utf-8")
    git(project, "commit", "-qam", "merge: the news feed rewrite")
    code, said = run("run-2")
    assert code == 0  # its own gates pass: only the comparison with the baseline catches it
    assert "baseline: nightly evaluation `run-2` is NOT the baseline (" in said
    assert "against the baseline `run-1`" in said
    assert "`evals baseline accept run-2 --reason ...` makes it the baseline" in said
    assert _baseline(history) == "run-1"

    capsys.readouterr()
    assert main(["run", "evals-suite", "--store", str(history), "--evaluation-id", "pr-env",
                 "--env", "pr", "-q"]) in (0, 1)  # fmt: skip
    assert "baseline:" not in capsys.readouterr().out
