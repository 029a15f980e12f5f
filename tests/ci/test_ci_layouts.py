"""Main's side runs main's code, in every way a project can hold its agent.

For each layout (`calcbot_project.LAYOUTS`) a user's project runs its nightly on main,
then a pull request that breaks 60 % of the `units` answers (and marks its code `pr`)
runs `evals ci pr` in the merge commit's checkout with one repeat more than the nightly
stored. Main's side must import main's `calcbot` (every base call answers with main's
mark, from the merge base's worktree or main's own virtual environment), compute the
agent fingerprint the nightly stored (so the nightly's responses answer the three
repeats it ran, and only the fourth calls main's agent), and the comment must name the
broken tag.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from calcbot_project import LAYOUTS, REGRESSION, Project

from evals.store import open_store
from tests.tiers import find_uv

pytestmark = pytest.mark.slow

CASES = 20


@pytest.mark.parametrize("layout", LAYOUTS)
def test_mains_side_imports_mains_code_and_matches_the_nightlys_fingerprint(
    layout: str, tmp_path: Path
) -> None:
    project = Project(layout, tmp_path, find_uv(), nightly_repeats=3)
    project.create()
    project.branch(
        "units-regression", {project.package: REGRESSION.replace('MARK = "main"', 'MARK = "pr"')}
    )
    history = tmp_path / "history.db"
    nightly = project.checkout("nightly")
    env = project.env(nightly, "schedule", "refs/heads/main")
    ran = project.evals(
        nightly, env, "ci", "nightly", "evals-suite", "--store", str(history),
        "--evaluation-id", "nightly-1", "--out", ".evals/nightly", "--quiet",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert project.take_calls(nightly) == {"head": {"main": CASES * 3}, "base": {}}

    pr = project.checkout("pr-1", "units-regression")
    env = project.env(
        pr,
        "pull_request",
        "refs/pull/1/merge",
        GITHUB_BASE_REF="main",
        GITHUB_HEAD_REF="units-regression",
    )
    ran = project.evals(
        pr, env, "ci", "pr", "evals-suite", "--store", str(history), "--repeat", "4",
        "--out", ".evals/ci", "--quiet",
    )  # fmt: skip

    comment = (pr / ".evals" / "ci" / "comment.md").read_text(encoding="utf-8")
    assert ran.returncode in (0, 1, 2, 3), ran.stderr
    calls = project.take_calls(pr)
    # The head ran its own code; main's side ran main's code: the drift guard's one fresh
    # run of every case and the repeat the nightly lacks, its three stored repeats
    # answered from the nightly's responses.
    assert calls["head"] == {"pr": CASES * 4}, comment
    assert calls["base"] == {"main": CASES * 2}, comment
    outcome = json.loads((pr / ".evals" / "ci" / "ci.json").read_text(encoding="utf-8"))
    store = open_store(str(history))
    try:
        stored = store.get_evaluation("nightly-1")
    finally:
        store.close()
    assert stored is not None
    assert outcome["base_agent_fingerprints"] == {"calcbot": stored.agent_fingerprints["calcbot"]}
    first = comment.splitlines()[0]
    assert (ran.returncode, outcome["verdict"]) == (1, "fail"), comment
    assert first.startswith("### ❌ evals pull request: FAIL: ") and "tag `units`" in first
    assert "main's side:" in comment
