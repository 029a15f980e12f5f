"""What a pull request's verdict sees, end to end through `evals ci pr` in a throwaway git
project: a tag of 7 cases dropping from 97.6 % to 52.4 % fails, naming the tag; a P0 case
that goes 5/5 → 0/5 fails although `evals ci pr` pairs the runs by seed; an unchanged agent
passes, saying on which cases and what the run would have caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from git_project import branch_with, git, github_env

from evals.cli import main

pytestmark = pytest.mark.slow

AGENT = """\
import random

# The share of runs each tag passes: main's agent.
RATES = {"units": 41 / 42, "io": 0.8, "docs": 0.95, "net": 0.6}
BROKEN = ()


def call_api(prompt, options, context):
    topic = context["vars"]["topic"]
    draw = random.Random(context["seed"]).random()
    good = draw < RATES[topic] and context["vars"]["name"] not in BROKEN
    return {"output": ("correct" if good else "wrong") + ": " + topic, "cost": 0.001}
"""

# The tag `units` now passes 22 of 42 runs: 97.6 % -> 52.4 %.
UNITS_DROP = AGENT.replace('"units": 41 / 42', '"units": 22 / 42')
# One P0 case now fails every run.
P0_BREAK = AGENT.replace("BROKEN = ()", 'BROKEN = ("checkout",)')
# Only a comment changes: the same answers.
UNCHANGED = AGENT.replace("# The share", "# Reworded.\n# The share")

TAGS = ("units",) * 7 + ("io",) * 5 + ("docs",) * 4 + ("net",) * 4
P0 = {0: "checkout", 7: "login", 12: "billing", 16: "search"}

SUITE = """\
description: a seeded agent on 20 cases
prompts: ["{{question}}"]
providers:
  - {id: "file://agent.py", label: agent}
evaluateOptions: {repeat: 12, maxConcurrency: 4}
gates:
  max_regression: 0.1
  per_tag:
    units: {max_regression: 0.1}
    io: {max_regression: 0.1}
    docs: {max_regression: 0.1}
    net: {max_regression: 0.1}
  environments:
    pr: {repeat: 12}
    nightly: {repeat: 12}
defaultTest:
  assert:
    - {type: icontains, value: "correct"}
tests:
"""


def _suite() -> str:
    tests = "".join(
        f"  - description: case {i}\n"
        f"    vars: {{question: 'q{i}', topic: {tag}, name: {P0.get(i, f'c{i}')}}}\n"
        f"    metadata: {{tags: [{tag}], priority: {'P0' if i in P0 else 'P1'}}}\n"
        for i, tag in enumerate(TAGS)
    )
    return SUITE + tests


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / "evals-suite").mkdir(parents=True)
    (repo / "evals-suite" / "agent.py").write_text(AGENT, encoding="utf-8")
    (repo / "evals-suite" / "promptfooconfig.yaml").write_text(_suite(), encoding="utf-8")
    (repo / ".gitignore").write_text(".evals/\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "suite and agent")
    monkeypatch.chdir(repo)
    for name in ("GITHUB_STEP_SUMMARY", "EVALS_STORE_URL", "GITHUB_HEAD_REF"):
        monkeypatch.delenv(name, raising=False)
    return repo


def _pull_request(
    project: Path, monkeypatch: pytest.MonkeyPatch, branch: str, agent: str, *extra: str
) -> tuple[int, dict, str]:
    branch_with(project, branch, {"evals-suite/agent.py": agent})
    variables = github_env(
        "pull_request", "refs/pull/9/merge", GITHUB_BASE_REF="main", GITHUB_HEAD_REF=branch
    )
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    out = project / ".evals" / branch
    code = main(["ci", "pr", "evals-suite", "--out", str(out), "--quiet", *extra])
    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    git(project, "checkout", "-q", "main")
    return code, outcome, (out / "comment.md").read_text(encoding="utf-8")


def _gates(outcome: dict) -> dict[str, dict]:
    return {g["name"]: g for g in outcome["results"][0]["gates"]["gates"]}


def test_a_tag_dropping_from_97_to_52_percent_fails_the_pull_request_naming_the_tag(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, outcome, comment = _pull_request(project, monkeypatch, "units-drop", UNITS_DROP)
    gates = _gates(outcome)
    assert (code, outcome["verdict"]) == (1, "fail")
    units = gates["regression[units]"]
    assert units["status"] == "fail"
    assert units["about"] == "on these 7 cases"
    assert units["fail_limit"] < -0.1
    assert "regression[units]" in comment and "units" in comment.splitlines()[0]
    assert all(gates[f"regression[{tag}]"]["status"] != "fail" for tag in ("io", "docs", "net"))


def test_a_p0_case_going_from_5_of_5_to_0_of_5_fails_a_paired_pull_request(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, outcome, comment = _pull_request(
        project, monkeypatch, "p0-break", P0_BREAK, "--repeat", "5"
    )
    gates = _gates(outcome)
    assert (code, outcome["verdict"]) == (1, "fail")
    assert gates["p0_regressions"]["status"] == "fail"
    assert gates["p0_regressions"]["reason"].startswith("loss shown on case-0 -100.0 pp")
    assert "paired by seed" in comment


def test_an_unchanged_agent_passes_saying_what_the_run_would_have_caught(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, outcome, comment = _pull_request(project, monkeypatch, "reworded", UNCHANGED)
    assert (code, outcome["verdict"]) == (0, "pass")
    first = comment.splitlines()[0]
    assert "PASS" in first and "on these 20 cases" in first
    assert "this run would catch -" in first and "on tag units" in first


def test_the_comment_shows_what_the_team_said_of_a_regressed_case(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nightly in the team store, a person's comment on one of its runs of the P0 case
    and a nightly-only quarantine of it: the pull request that breaks the case names both
    beside it, above the fold, with who and when."""
    history = str(project.parent / "history.db")
    for name, value in github_env("schedule", "refs/heads/main").items():
        monkeypatch.setenv(name, value)
    assert main(["run", "evals-suite", "--env", "nightly", "--store", history,
                 "--evaluation-id", "n1", "-q"]) == 0  # fmt: skip
    assert main(["triage", "annotate", "comment", "--evaluation", "n1", "--case", "case-0",
                 "--agent", "agent", "--reason", "checkout flaked when the payments sandbox "
                 "moved", "--by", "alice", "--store", history]) == 0  # fmt: skip
    assert main(["triage", "add", "quarantine", "--suite", "evals-suite", "--case", "case-0",
                 "--env", "nightly", "--until", "7d", "--reason", "known flaky", "--by", "bob",
                 "--store", history]) == 0  # fmt: skip

    code, outcome, comment = _pull_request(
        project, monkeypatch, "p0-notes", P0_BREAK, "--repeat", "5", "--store", history
    )

    assert code == 1
    above = comment.partition("<details>")[0]
    assert (
        "- case `case-0` -100.0 pp — quarantined for nightly: known flaky — bob, just now; "
        "checkout flaked when the payments sandbox moved — alice, just now"
    ) in above
    assert {(a["kind"], a["actor"]) for a in outcome["case_triage"]} == {
        ("quarantine", "bob"),
        ("comment", "alice"),
    }
