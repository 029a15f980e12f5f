"""The exit code follows the gates' verdict and the environment's on_undetermined; a broken
candidate fails the build; `evals validate` warns of gates that cannot pass."""

from __future__ import annotations

import pytest

from evals.cli import main

AGENTS = """
def steady(prompt, options, context):
    return {"output": "yes" if (int(context["vars"]["n"]) + context["repeat"]) % 3 else "no"}


def broken(prompt, options, context):
    raise RuntimeError("OPENAI_API_KEY is not set")
"""


def _suite(write_suite, candidate: str, gates: str = "") -> str:
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n"
        f"    metadata: {{priority: {'P0' if n == 0 else 'P1'}, tags: [{'t' if n < 5 else 'u'}]}}\n"
        "    assert: [{type: contains, value: 'yes'}]"
        for n in range(10)
    )
    path = write_suite(
        "prompts: ['{{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:steady, label: base}\n"
        f"  - {{id: file://agents.py:{candidate}, label: cand}}\n"
        "evaluateOptions: {repeat: 3}\n"
        f"gates: {{baseline: base, candidate: cand{gates}}}\n"
        f"tests:\n{tests}\n",
        files={"agents.py": AGENTS},
    )
    return str(path)


def test_a_pull_request_passes_saying_what_it_would_catch_and_a_release_fails(write_suite, capsys):
    """A pull request fails only on a loss shown beyond the tolerance; otherwise it passes
    and says, on these cases, the smallest loss the run would have caught. A nightly run
    warns on what it cannot decide; a release must show its gates met."""
    path = _suite(write_suite, "steady")
    assert main(["run", path, "--no-store", "--no-progress", "--env", "pr"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Gate verdict (pr): PASS — no loss beyond the tolerance shown on these 10 cases" in out
    assert "this run would catch -" in out
    assert main(["run", path, "--no-store", "--no-progress", "--env", "nightly"]) == 0
    out = capsys.readouterr().out
    assert "UNDETERMINED — warning only, the build passes (on_undetermined: warn)" in out
    block = out[out.rindex("\n\n") :].splitlines()
    assert [line.split()[1:3] for line in block if line.startswith("  ⚠️ ")] == [
        ["error_rate", "undetermined:"],
        ["regression", "undetermined:"],
        ["p0_regressions", "undetermined:"],
    ]
    assert main(["run", path, "--no-store", "--no-progress", "--env", "release"]) == 1
    out = capsys.readouterr().out
    assert "UNDETERMINED — fails the build (on_undetermined: fail)" in out


def test_a_candidate_whose_every_run_raises_fails_the_build(write_suite, capsys):
    """Before: every run was an error, errors were left out of the rates and the
    verdict, undetermined, exited 0."""
    path = _suite(write_suite, "broken")
    assert main(["run", path, "--no-store", "--no-progress", "--env", "pr"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "FAIL" in out
    assert "most often agent_error (30)" in out
    assert "OPENAI_API_KEY is not set" in out


@pytest.mark.slow
def test_validate_names_gates_that_cannot_decide_with_the_repeats_that_would(write_suite, capsys):
    path = _suite(write_suite, "steady", ", environments: {release: {repeat: 5}, pr: {}}")
    assert main(["validate", path]) == 0
    err = " ".join(capsys.readouterr().err.split())
    release = "environment release: "
    assert f"{release}regression cannot pass at 5 repeats" in err
    assert "a tolerated loss of 0 passes only when the candidate is shown better" in err
    assert f"{release}p0_regressions cannot pass at 5 repeats" in err
    assert "it needs at least 17 repeats" in err
    assert f"{release}error_rate cannot pass at 5 repeats" in err
    # A pull request passes what it cannot decide: only a gate that cannot fail is named
    # there, and at 3 repeats a P0 case's 3/3 -> 0/3 (p = 2^-6) still fails at its share.
    assert "environment pr" not in err


def test_validate_and_plan_name_a_p0_gate_that_cannot_fail_a_total_break(write_suite, capsys):
    """With a tag gate added the budget splits four ways: 3 of 3 -> 0 of 3 (p = 2^-6)
    no longer reaches the P0 gate's share, so a total break of a P0 case could not fail
    a pull request at 3 repeats; 4 would do."""
    gates = ", per_tag: {t: {max_regression: 0.1}}, environments: {pr: {}}"
    path = _suite(write_suite, "steady", gates)
    assert main(["validate", path]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "environment pr: p0_regressions cannot fail at 3 repeats: not even a total break "
        "of its cases alone would show beyond its threshold" in err
    )
    assert "it needs at least 4 repeats" in err
    assert main(["plan", path, "--env", "pr"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "cannot decide: environment pr: p0_regressions cannot fail at 3 repeats" in out
    relaxed = _suite(
        write_suite,
        "steady",
        ", max_regression: 0.1, environments: {release: {repeat: 20, max_error_rate: 0.1}}",
    )
    assert main(["validate", relaxed]) == 0
    assert "undetermined" not in capsys.readouterr().err
