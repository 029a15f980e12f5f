"""`evals history` and `evals compare` over a real store."""

from __future__ import annotations

import json

import pytest

from evals.cli import main
from evals.model.errors import ExitCode

pytestmark = pytest.mark.slow

AGENT = """
def call_api(prompt, options, context):
    better = options["config"].get("better", False)
    return {"output": "yes" if better or context["repeat"] % 2 else "no"}
"""

SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: file://agent.py, label: baseline}
  - {id: file://agent.py, label: candidate, config: {better: true}}
evaluateOptions: {repeat: 4}
gates: {min_pass_rate: 0.0}
tests:
  - vars: {q: one}
    assert: [{type: equals, value: "yes"}]
  - vars: {q: two}
    assert: [{type: equals, value: "yes"}]
"""


def _stored_verdict(url: str, evaluation_id: str) -> str:
    from evals.store import open_store

    store = open_store(url)
    try:
        verdict = store.get_evaluation(evaluation_id).verdict
    finally:
        store.close()
    assert verdict in ("pass", "fail", "undetermined")
    return verdict


def test_history_lists_evaluations_with_their_verdicts(write_suite, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # a log: every row on one line
    suite = write_suite(SUITE, files={"agent.py": AGENT})
    store = f"sqlite:///{tmp_path / 'store.db'}"
    base = ["run", str(suite), "--store", store, "--no-progress", "-q"]
    assert main([*base, "--env", "nightly", "--evaluation-id", "night-1"]) == ExitCode.OK
    assert main([*base, "--evaluation-id", "pr-1"]) == ExitCode.OK
    capsys.readouterr()
    assert main(["history", "--store", store]) == ExitCode.OK
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line.strip().startswith(("night-1", "pr-1"))]
    assert [row[0] for row in rows] == ["pr-1", "night-1"]
    # The verdict column, then (for nightlies) whether it is the baseline and why: the
    # decision `evals run --env nightly` recorded, by `evals ci nightly`'s rule.
    assert rows[0][-1] == _stored_verdict(store, "pr-1")
    verdict = rows[1].index(_stored_verdict(store, "night-1"), rows[1].index("nightly"))
    why = " ".join(rows[1][verdict + 1 :])  # the end of a long reason wraps to the next line
    assert why.startswith("★ baseline: its gates passed; there was no baseline")


@pytest.mark.parametrize("columns", [None, "80"])
def test_history_never_cuts_an_evaluation_id(write_suite, tmp_path, capsys, monkeypatch, columns):
    """Before: ids were cut at 28 characters (`nightly-2026-12-07-main-bra…`), so the id
    `evals compare` needs could not be copied from the list."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    suite = write_suite(SUITE, files={"agent.py": AGENT})
    store = f"sqlite:///{tmp_path / 'store.db'}"
    long_id = "nightly-2026-12-07-main-branch-abcdef1234"
    run = ["run", str(suite), "--store", store, "--no-progress", "-q", "--evaluation-id", long_id]
    assert main(run) == ExitCode.OK
    capsys.readouterr()
    assert main(["history", "--store", store]) == ExitCode.OK
    out = capsys.readouterr().out
    assert long_id in out.split()
    assert all(line == line.rstrip() for line in out.splitlines())


def test_compare_of_one_id_takes_the_newest_evaluation_of_its_own_suite(
    write_suite, tmp_path, capsys
):
    """`evals compare ID` (what the end of `evals run` proposes) compares ID with the newest
    evaluation of ID's suite. Before: with the newest of any suite, so another suite run
    in between made it fail with "ran different versions of suite ..."."""
    store = f"sqlite:///{tmp_path / 'store.db'}"
    desk = write_suite(SUITE, files={"agent.py": AGENT}, name="desk.yaml")
    other = write_suite(SUITE.replace("q: two", "q: three"), name="other.yaml")
    for suite, evaluation in ((desk, "d1"), (other, "o1"), (desk, "d2"), (other, "o2")):
        run = ["run", str(suite), "--store", store, "--no-progress", "-q"]
        assert main([*run, "--evaluation-id", evaluation]) == ExitCode.OK
    capsys.readouterr()
    out = tmp_path / "compare.md"
    assert main(["compare", "d1", "--store", store, "-q", "-o", str(out)]) == ExitCode.OK
    assert "d1..d2" in out.read_text(encoding="utf-8")

    assert main(["compare", "d1", "o2", "--store", store, "-q"]) == ExitCode.INVALID_INPUT
    assert "different versions of suites desk and other" in capsys.readouterr().err


def test_compare_gates_a_stored_candidate_against_a_stored_baseline(write_suite, tmp_path, capsys):
    suite = write_suite(SUITE, files={"agent.py": AGENT})
    store = f"sqlite:///{tmp_path / 'store.db'}"
    base = ["run", str(suite), "--store", store, "--no-progress", "-q"]
    main([*base, "--evaluation-id", "e1"])
    main([*base, "--evaluation-id", "e2"])
    report = tmp_path / "compare.md"
    code = main(
        [
            "compare",
            "e1",
            "e2",
            "--store",
            store,
            "--baseline-agent",
            "candidate",
            "--candidate-agent",
            "baseline",
            "-o",
            str(report),
            "-q",
        ]
    )
    text = report.read_text(encoding="utf-8")
    assert "e1..e2" in text
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED)
    assert main(["compare", "e1", "missing", "--store", store]) == ExitCode.INVALID_INPUT


def _nightly_then(write_suite, tmp_path, capsys, agent: str, suite_text: str):
    """A nightly on main, then a pull-request run with `agent` and `suite_text`."""
    suite = write_suite(SUITE, files={"agent.py": AGENT})
    store = f"sqlite:///{tmp_path / 'store.db'}"
    base = ["run", str(suite), "--store", store, "--no-progress", "-q"]
    assert main([*base, "--env", "nightly", "--evaluation-id", "night-1"]) == ExitCode.OK
    (tmp_path / "agent.py").write_text(agent, encoding="utf-8")
    suite.write_text(suite_text, encoding="utf-8")
    main([*base, "--env", "pr", "--evaluation-id", "pr-1"])
    capsys.readouterr()
    return store


@pytest.fixture(autouse=True)
def _on_main(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_HEAD_REF", "GITHUB_EVENT_NAME", "GITHUB_SHA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_REF_NAME", "main")


def test_compare_across_an_agent_change_is_the_normal_case(write_suite, tmp_path, capsys):
    edited = AGENT.replace('"no"', '"nope"')
    store = _nightly_then(write_suite, tmp_path, capsys, edited, SUITE)
    report = tmp_path / "compare.md"

    code = main(["compare", "latest", "pr-1", "--store", store, "-o", str(report), "-q"])

    assert code in (ExitCode.OK, ExitCode.GATE_FAILED)
    text = report.read_text(encoding="utf-8")
    assert "night-1..pr-1" in text
    assert "agent candidate: changed (fingerprint" in text
    assert "the suite changed" not in text


def test_compare_across_a_suite_change_is_refused_or_kept_to_shared_cases(
    write_suite, tmp_path, capsys
):
    changed = SUITE.replace(
        'q: two}\n    assert: [{type: equals, value: "yes"}]',
        'q: two}\n    assert: [{type: equals, value: "no"}]',
    )
    changed += '  - vars: {q: three}\n    assert: [{type: equals, value: "yes"}]\n'
    assert changed.count('value: "no"') == 1
    store = _nightly_then(write_suite, tmp_path, capsys, AGENT, changed)

    code = main(["compare", "latest", "pr-1", "--store", store, "-q"])
    assert code == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "ran another version of the suite" in err
    assert "--allow-fingerprint-mismatch" in err
    code = main(["compare", "night-1", "pr-1", "--store", store, "-q"])
    assert code == ExitCode.INVALID_INPUT
    assert "1 case(s) shared, 1 changed, 1 added, 0 removed" in capsys.readouterr().err

    report = tmp_path / "shared.json"
    code = main(
        [
            "compare",
            "latest",
            "pr-1",
            "--store",
            store,
            "--allow-fingerprint-mismatch",
            "-o",
            str(report),
            "-q",
        ]
    )
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED)
    section = json.loads(report.read_text(encoding="utf-8"))["evals"]
    compared = {c["case_id"] for c in section["summary"]["comparison"]["cases"]}
    assert compared == {"case-1"}
    warnings = section["gates"]["warnings"]
    assert "the suite changed: compared on the 1 case(s) both versions share" in warnings
    assert (
        "1 case(s) only in the candidate's suite (in its own gates, not compared): case-3"
        in warnings
    )
    assert any(w.startswith("1 case(s) changed") and w.endswith(": case-2") for w in warnings)


def test_one_evaluation_named_twice_compares_its_baseline_with_its_candidate(
    write_suite, tmp_path, capsys
):
    """Before: without agent flags both sides took the suite's candidate agent, so `evals
    compare ID ID` compared the candidate with itself (a difference of 0, always)."""
    suite = write_suite(SUITE, files={"agent.py": AGENT})
    store = f"sqlite:///{tmp_path / 'store.db'}"
    main(["run", str(suite), "--store", store, "--no-progress", "-q", "--evaluation-id", "e1"])
    report = tmp_path / "compare.json"

    main(["compare", "e1", "e1", "--store", store, "-o", str(report), "-q"])

    summary = json.loads(report.read_text(encoding="utf-8"))["evals"]["summary"]
    rates = {a["agent"]: a["pass_rate"] for a in summary["agents"] if a["group"] == "suite"}
    assert rates == {"baseline": 0.5, "candidate": 1.0}
    assert summary["comparison"]["overall"]["difference"] == pytest.approx(0.5)

    code = main(["compare", "e1", "e1", "--store", store, "--baseline-agent", "candidate", "-q"])
    assert code == ExitCode.INVALID_INPUT
    assert "with itself" in capsys.readouterr().err
