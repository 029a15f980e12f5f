"""The pull-request loop end to end, as a team lives it.

A user's repository (`calcbot_project`): the agent `calcbot` installed editable, a
20-case suite, a bare origin. The nightly runs as four shards and a merge; each pull
request is built as GitHub builds it (the merge commit of its branch into main) and runs
`evals ci pr` with the workflow's stages (`--until-decided 3,6,12`). The branches: a
harmless refactor, a change that breaks 60 % of one tag, a new case that fails every
run, an import crash, an agent whose every run errors; then the regression is merged to
main: the next nightly is not the baseline until a triager accepts it.

Every branch's agent calls are counted on each side (main's, the pull request's): the
nightly stores 12 repeats, so main's side costs only the drift guard's one fresh run of
every case.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from calcbot_project import BROKEN, CRASH, REFACTOR, REGRESSION, Project, case_text

from evals.reports.ci import COMMENT_MARKER
from evals.store import open_store
from tests.tiers import find_uv

pytestmark = pytest.mark.slow

CASES = 20
STAGES = ("--until-decided", "3,6,12")
NEW_CASE = case_text("greeting", "Zed", "Hello, Zed?!")


def _outcome(checkout: Path) -> tuple[dict, str, set[str]]:
    """ci.json, comment.md and the JUnit test cases that failed."""
    ci = checkout / ".evals" / "ci"
    outcome = json.loads((ci / "ci.json").read_text(encoding="utf-8"))
    comment = (ci / "comment.md").read_text(encoding="utf-8")
    failed = {
        case.get("name") or ""
        for junit in ci.glob("*.junit.xml")
        for case in ET.parse(junit).iter("testcase")
        if case.find("failure") is not None
    }
    return outcome, comment, failed


def _baseline(history: Path) -> str | None:
    store = open_store(str(history))
    try:
        found = store.baselines("evals-suite")
        return found[0].id if found else None
    finally:
        store.close()


def test_the_pull_request_loop_end_to_end(tmp_path: Path) -> None:
    project = Project("editable", tmp_path, find_uv(), nightly_repeats=12)
    project.create()
    marked = {name: text.replace('MARK = "main"', f'MARK = "{name}"') for name, text in (
        ("refactor", REFACTOR), ("units", REGRESSION), ("crash", CRASH), ("broken", BROKEN),
    )}  # fmt: skip
    suite = (project.dev / project.suite).read_text(encoding="utf-8")
    project.branch("refactor", {project.package: marked["refactor"]})
    project.branch("units", {project.package: marked["units"]})
    project.branch("new-case", {project.suite: suite + NEW_CASE})
    project.branch("crash", {project.package: marked["crash"]})
    project.branch("broken", {project.package: marked["broken"]})
    history = tmp_path / "history.db"
    calls: dict[str, dict[str, dict[str, int]]] = {}

    code, nightly = project.sharded_nightly("nightly-1", history)
    assert code == 0
    calls["nightly-1"] = project.take_calls(nightly)
    assert calls["nightly-1"] == {"head": {"main": CASES * 12}, "base": {}}
    assert _baseline(history) == "nightly-1"

    results = {}
    for number, branch in enumerate(("refactor", "units", "new-case", "crash", "broken"), 1):
        code, checkout = project.pull_request(number, branch, history, *STAGES)
        outcome, comment, failed = _outcome(checkout)
        calls[branch] = project.take_calls(checkout)
        results[branch] = (code, outcome, comment, failed)
        assert comment.rstrip().endswith(COMMENT_MARKER), comment
        # Main's side never ran the pull request's code; the nightly's 12 repeats served it.
        assert set(calls[branch]["base"]) <= {"main"}, calls[branch]

    code, outcome, comment, failed = results["refactor"]
    assert (code, outcome["verdict"]) == (0, "pass"), comment
    assert comment.startswith("### ✅ evals pull request: PASS")
    # main's side: only the drift guard's one fresh run of every case
    assert calls["refactor"]["base"] == {"main": CASES} and "no agent called for it" in comment
    assert "no drift shown" in comment

    code, outcome, comment, failed = results["units"]
    assert (code, outcome["verdict"]) == (1, "fail"), comment
    first = comment.splitlines()[0]
    assert first.startswith("### ❌ evals pull request: FAIL: ") and "tag `units`" in first
    assert {"arith", "greeting"}.isdisjoint(comment.splitlines()[0].split("`")[1::2])
    assert any(case.startswith("units") for case in failed)

    # The new case runs, counts in the head's own gates and fails its JUnit test case (the
    # check "evals gates" goes red), is listed above the fold, and fails the pull request:
    # the suite-wide pass rate over 21 cases hides it, the new cases' own does not.
    code, outcome, comment, failed = results["new-case"]
    assert outcome["added_cases"] == ["greeting-zed"]
    assert "greeting-zed" in failed
    above = comment.partition("<details>")[0]
    assert "- new case `greeting-zed`: 0/" in above and "passed (0.0%)" in above
    gates = {g["name"]: g for g in outcome["results"][0]["gates"]["gates"]}
    assert f"on these {CASES + 1} cases" in gates["min_pass_rate"]["reason"]
    assert gates["min_pass_rate"]["status"] == "pass"
    assert gates["min_pass_rate[new or changed]"]["status"] == "fail"
    assert (code, outcome["verdict"]) == (1, "fail"), comment
    assert "`min_pass_rate[new or changed]` failed (0.0%)" in comment.splitlines()[0]

    code, outcome, comment, failed = results["crash"]
    assert (code, outcome["verdict"]) == (2, "error")
    assert comment.startswith("### ❌ evals pull request: ERROR (exit 2)")
    assert "calcbot_helpers_that_do_not_exist" in comment and "- what to do:" in comment
    assert calls["crash"] == {"head": {}, "base": {}}

    code, outcome, comment, failed = results["broken"]
    assert (code, outcome["verdict"]) == (1, "fail"), comment
    assert "`error_rate` failed" in comment.splitlines()[0]

    # The regression is merged to main: the next nightly sees it and is not the baseline.
    project.merge_to_main("units")
    code, nightly = project.sharded_nightly("nightly-2", history)
    calls["nightly-2"] = project.take_calls(nightly)
    summary = (nightly / ".evals" / "nightly" / "summary.md").read_text(encoding="utf-8")
    assert "baseline: tonight's `nightly-2` is NOT the baseline" in summary, summary
    assert "`nightly-1` stays the baseline" in summary
    assert _baseline(history) == "nightly-1"
    accepted = project.evals(
        nightly, project.env(nightly, "workflow_dispatch", "refs/heads/main"),
        "baseline", "accept", "nightly-2", "--reason", "units now rounds to the unit asked",
        "--by", "lead@example.com", "--store", str(history),
    )  # fmt: skip
    assert accepted.returncode == 0, accepted.stderr
    assert _baseline(history) == "nightly-2"
    listed = project.evals(
        nightly, project.env(nightly, "workflow_dispatch", "refs/heads/main"),
        "history", "--store", str(history),
    )  # fmt: skip
    assert "★ baseline: accepted by lead@example.com" in listed.stdout

    # A pull request after the merge is compared with main as it is now, for free.
    project.branch(
        "after", {project.package: REGRESSION.replace("FACTORS = {", "FACTORS = {  # metres\n    ")}
    )
    code, checkout = project.pull_request(6, "after", history, *STAGES)
    outcome, comment, failed = _outcome(checkout)
    calls["after-merge"] = project.take_calls(checkout)
    # Compared with main as it is (the accepted nightly), the pull request changed nothing:
    # no regression gate fails. Against `nightly-1`, `regression[units]` would. Main's own
    # pass rate (its units answers are 60 % wrong) may stay below `min_pass_rate`, an
    # absolute gate the head inherits from main: that alone may fail the build.
    statuses = {g["name"]: g["status"] for g in outcome["results"][0]["gates"]["gates"]}
    assert statuses["regression[units]"] != "fail", comment
    assert {name for name, status in statuses.items() if status == "fail"} <= {"min_pass_rate"}
    assert code in (0, 1) and (code == 1) == (outcome["verdict"] == "fail"), comment
    assert "baseline: the stored runs of nightly `nightly-2`" in comment
    # main's agent (its calls now marked `units`): the drift guard's runs alone
    assert sum(calls["after-merge"]["base"].values()) == CASES

    print("agent calls by side:", json.dumps(calls, indent=2))
