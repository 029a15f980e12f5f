"""A pull request that adds or changes cases is gated on them: they run, count in the
absolute gates and in JUnit, and are listed in the comment; only the comparison keeps to
the cases both sides define alike."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from git_project import TOPICS, branch_with, github_env, make_project

from evals.cli import main

pytestmark = pytest.mark.slow

SUITE_PATH = "evals-suite/promptfooconfig.yaml"
NEW_CASE = """  - description: refuses to guess
    vars: {question: 'qn', topic: news}
    assert: [{type: equals, value: "never said"}]
    metadata: {tags: [news, golden]}
"""


def _suite_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose pull request changes case 1 to fail every run and adds a case that
    fails every run; the pull request's checkout is the working directory. Its output
    folder."""
    repo = tmp_path / "repo"
    repo.mkdir()
    suite = make_project(repo)
    text = suite.read_text(encoding="utf-8")
    # Case 1 asks for an answer the agent never gives: changed so it fails every run.
    changed = text.replace(
        "vars: {question: 'q1', topic: prices}",
        "vars: {question: 'q1', topic: prices}\n    assert: [{type: contains, value: 'zzz'}]",
    )
    assert changed != text
    branch_with(repo, "suite-edit", {SUITE_PATH: changed + NEW_CASE})
    monkeypatch.chdir(repo)
    for name, value in github_env(
        "pull_request", "refs/pull/5/merge", GITHUB_BASE_REF="main", GITHUB_HEAD_REF="suite-edit"
    ).items():
        monkeypatch.setenv(name, value)
    return repo / ".evals" / "ci"


def test_new_and_changed_cases_count_in_the_absolute_gates_and_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _suite_edit(tmp_path, monkeypatch)

    code = main(["ci", "pr", "evals-suite", "--out", str(out), "--repeat", "4", "--quiet"])

    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    assert outcome["added_cases"] == ["refuses-to-guess"]
    assert outcome["changed_cases"] == ["case-1-about-prices"]
    [result] = outcome["results"]
    gates = {g["name"]: g for g in result["gates"]["gates"]}
    golden = len(TOPICS) - 1
    # The head's own pass rate is over every pull-request case, new and changed included.
    assert f"on these {golden + 1} cases" in gates["min_pass_rate"]["reason"]
    comment = (out / "comment.md").read_text(encoding="utf-8")
    above = comment.partition("<details>")[0]
    assert "- new case `refuses-to-guess`: 0/4 passed (0.0%)" in above
    assert "- changed case `case-1-about-prices`: 0/4 passed (0.0%)" in above
    assert "compared on the 24 case(s) both versions share" in comment
    # The suite's thresholds did not change: the edited cases' group is the job's own.
    assert "the gate thresholds changed" not in comment
    [junit] = out.glob("*.junit.xml")
    failed = {
        case.get("name")
        for case in ET.parse(junit).iter("testcase")
        if case.find("failure") is not None
    }
    assert {"refuses-to-guess", "case-1-about-prices"} <= failed
    # The suite-wide pass rate hides two failing cases among many good ones; as a group of
    # their own the new and changed cases fail the pull request.
    assert gates["min_pass_rate"]["status"] != "fail"
    edited = gates["min_pass_rate[new or changed]"]
    assert edited["status"] == "fail" and "on these 2 cases" in edited["reason"]
    assert (code, outcome["verdict"]) == (1, "fail")
    assert "`min_pass_rate[new or changed]` failed (0.0%)" in comment.splitlines()[0]


@pytest.mark.parametrize("design", [("--until-decided", "2,4,8"), ("--adaptive", "8")])
def test_the_new_and_changed_cases_fail_the_pull_request_in_staged_and_adaptive_jobs(
    design: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _suite_edit(tmp_path, monkeypatch)

    code = main(["ci", "pr", "evals-suite", "--out", str(out), *design, "--quiet"])

    outcome = json.loads((out / "ci.json").read_text(encoding="utf-8"))
    [result] = outcome["results"]
    gates = {g["name"]: g for g in result["gates"]["gates"]}
    # Decided on the edited cases' runs: the looks ran them until the group failed.
    assert gates["min_pass_rate[new or changed]"]["status"] == "fail", gates
    assert (code, outcome["verdict"]) == (1, "fail")
