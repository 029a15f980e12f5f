"""`evals run --reuse-baseline`: a team's stored baseline answers the baseline agent's calls
when its fingerprint, the suite and the seed are unchanged, behind a drift guard that
re-runs a share of them fresh and falls back to a fresh baseline when the world moved."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evals.cli import main

AGENTS = """
from pathlib import Path

HERE = Path(__file__).parent


def _answer(name, context):
    with open(HERE / "calls.log", "a") as log:
        log.write(name + "\\n")
    if (HERE / "world.txt").read_text().strip() == "moved":
        return {"output": "no"}
    return {"output": "yes" if (int(context["vars"]["n"]) + context["repeat"]) % 4 else "no"}


def main_agent(prompt, options, context):
    return _answer("main", context)


def branch_agent(prompt, options, context):
    return _answer("branch", context)
"""


@pytest.fixture
def project(write_suite) -> Path:
    """A 20-case suite of two agents whose answers depend on a world file."""
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n"
        f"    metadata: {{tags: [{'api' if n < 8 else 'ui'}]}}\n"
        "    assert: [{type: contains, value: 'yes'}]"
        for n in range(20)
    )
    path = write_suite(
        "prompts: ['{{n}}']\n"
        "providers:\n"
        "  - {id: file://support_agents.py:main_agent, label: main}\n"
        "  - {id: file://support_agents.py:branch_agent, label: branch}\n"
        "evaluateOptions: {repeat: 3}\n"
        "gates: {baseline: main, candidate: branch}\n"
        f"tests:\n{tests}\n",
        files={"support_agents.py": AGENTS, "world.txt": "steady\n"},
        name="support.yaml",
    )
    return path


def _run(project: Path, *extra: str) -> tuple[int, Counter[str], dict]:
    """Run the suite as a user does, with a JSON report; (exit code, agent calls, report)."""
    calls = project.parent / "calls.log"
    calls.write_text("")
    report = project.parent / "report.json"
    code = main(
        [
            "run",
            str(project),
            "--store",
            str(project.parent / "results.db"),
            "--env",
            "pr",
            "--no-progress",
            "-o",
            str(report),
            *extra,
        ]
    )
    return code, Counter(calls.read_text().split()), json.loads(report.read_text())["evals"]


@pytest.mark.slow
def test_a_stored_baseline_answers_the_baseline_and_a_moved_world_runs_it_fresh(project, capsys):
    code, calls, first = _run(project)
    assert code == 0 and calls == {"main": 60, "branch": 60}
    assert first["gates"]["reuse"] is None
    # a first run, with nothing stored, says nothing about a baseline
    assert "baseline main" not in capsys.readouterr().err

    # the second run of the unchanged agent reuses its stored runs without being asked
    code, calls, reused = _run(project)
    out = " ".join(capsys.readouterr().out.split())
    # the guard re-runs a fifth of the stored runs, at least one per case; no other call
    assert code == 0 and calls == {"main": 20, "branch": 60}
    reuse = reused["gates"]["reuse"]
    assert reuse["reused"] == 40 and reuse["guard"] == 20 and not reuse["fell_back"]
    assert reuse["calls"] == 80 and reuse["fixed_calls"] == 120
    assert reuse["source"] == first["evaluationId"]
    assert "baseline main: 40 stored run(s) reused, 20 re-run fresh as a drift check" in out
    assert "agent calls: 80 against 120 with every agent run fresh (40 saved, 33%)" in out
    # half the false-failure budget is kept against a drift the guard missed
    assert reused["gates"]["spend"] == pytest.approx(first["gates"]["spend"] / 2)
    outcomes = [(a["agent"], a["runs"], a["passes"]) for a in first["summary"]["agents"]]
    assert [(a["agent"], a["runs"], a["passes"]) for a in reused["summary"]["agents"]] == outcomes

    (project.parent / "world.txt").write_text("moved\n")
    code, calls, moved = _run(project)
    out = " ".join(capsys.readouterr().out.split())
    # the guard's 20 fresh runs are kept and the other 40 baseline runs are made fresh
    assert calls == {"main": 60, "branch": 60}
    assert moved["gates"]["reuse"]["fell_back"] is True
    assert "baseline main: drift found (20 stored run(s) re-run fresh pass" in out
    assert "baseline re-run fresh" in out
    assert moved["gates"]["spend"] == pytest.approx(first["gates"]["spend"])


@pytest.mark.slow
def test_a_changed_agent_or_fresh_baseline_runs_the_baseline_fresh(project, capsys):
    # gates.reuse_baseline: false calls the baseline for every run, the second one too
    config = project.read_text()
    project.write_text(config.replace("gates: {", "gates: {reuse_baseline: false, "))
    for _ in range(2):
        _, calls, report = _run(project)
        assert calls == {"main": 60, "branch": 60} and report["gates"]["reuse"] is None
    project.write_text(config)
    assert _run(project)[0] == 0
    # so does --fresh-baseline
    _, calls, report = _run(project, "--fresh-baseline")
    assert calls == {"main": 60, "branch": 60} and report["gates"]["reuse"] is None
    # an edit to the agents' code changes the baseline's fingerprint: nothing stored is its
    agents = project.parent / "support_agents.py"
    agents.write_text(agents.read_text() + "\n# a comment\n")
    capsys.readouterr()
    _, calls, report = _run(project)
    assert calls == {"main": 60, "branch": 60} and report["gates"]["reuse"] is None
    assert "baseline main" not in capsys.readouterr().err


@pytest.mark.slow
def test_without_a_stored_evaluation_the_baseline_runs_fresh_and_says_why(project, capsys):
    code, calls, report = _run(project, "--reuse-baseline", "--repeat", "1")
    assert code == 0 and calls == {"main": 20, "branch": 20}
    assert report["gates"]["reuse"] is None
    err = " ".join(capsys.readouterr().err.split())
    assert "baseline main runs fresh: no complete evaluation in the store ran this suite" in err


def test_reuse_refuses_a_cache_of_its_own(project, capsys):
    assert main(["run", str(project), "--reuse-baseline", "--cache", "--no-progress"]) == 2
    assert "drop --cache" in capsys.readouterr().err


@pytest.mark.slow
def test_an_adaptive_run_against_a_stored_baseline_calls_the_baseline_only_for_the_guard(
    project, capsys
):
    code, calls, _ = _run(project, "--repeat", "10")
    assert code == 0 and calls == {"main": 200, "branch": 200}
    capsys.readouterr()
    code, calls, report = _run(project, "--reuse-baseline", "--adaptive", "10")
    reuse = report["gates"]["reuse"]
    # the guard's fresh fifth of the 200 stored runs; every other baseline run is stored
    assert code == 0 and calls["main"] == 40 == reuse["guard"]
    assert 0 < calls["branch"] <= 200
    assert reuse["calls"] == calls["main"] + calls["branch"] and reuse["fixed_calls"] == 400
    assert reuse["reused"] > 0 and not reuse["fell_back"]
    out = " ".join(capsys.readouterr().out.split())
    assert "adaptive run:" in out and "no drift shown" in out


@pytest.mark.slow
def test_an_agent_whose_code_the_fingerprint_cannot_see_is_reused_only_when_asked(
    write_suite, capsys
):
    """`exec: echo` runs a command outside the project: a change to it would not change
    its fingerprint, so its stored runs are named but not reused unless asked."""
    path = write_suite(
        "prompts: ['yes {{n}}']\n"
        "providers:\n"
        "  - {id: 'exec: echo', label: main}\n"
        "  - {id: 'exec: echo', label: branch, config: {tone: plain}}\n"
        "gates: {baseline: main, candidate: branch}\n"
        "tests:\n"
        + "".join(
            f"  - {{vars: {{n: {n}}}, assert: [{{type: contains, value: 'yes'}}]}}\n"
            for n in range(4)
        ),
    )
    command = ["run", str(path), "--repeat", "3", "--store", str(path.parent / "r.db")]
    assert main([*command, "--no-progress"]) == 0
    assert "stored run(s)" not in capsys.readouterr().err

    assert main([*command, "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert (
        "baseline main: 12 stored run(s) not reused, because the code behind exec: echo is "
        "not a file of the project" in " ".join(captured.err.split())
    )
    assert "stored run(s) reused" not in captured.out

    assert main([*command, "--no-progress", "--reuse-baseline"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "baseline main: 8 stored run(s) reused, 4 re-run fresh as a drift check" in out


def test_a_nightly_and_a_release_run_their_baseline_fresh_unless_the_suite_says_otherwise():
    """A nightly measures main's agents as they answer today, a release shows its gates on
    fresh runs: stored runs stand in by default everywhere else."""
    from evals.model.gates import GateConfig

    default = GateConfig()
    assert [default.for_environment(e).reuse_baseline for e in (None, "pr")] == [True, True]
    assert [default.for_environment(e).reuse_baseline for e in ("nightly", "release")] == [
        False,
        False,
    ]
    told = GateConfig(reuse_baseline=False, environments={"nightly": {"reuse_baseline": True}})
    assert told.for_environment("nightly").reuse_baseline is True
    assert told.for_environment("pr").reuse_baseline is False
