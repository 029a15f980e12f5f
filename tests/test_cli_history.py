"""`evals history` and `evals compare` over a real store."""

from __future__ import annotations

from evals.cli import main
from evals.model.errors import ExitCode

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


def test_history_lists_evaluations_with_their_verdicts(write_suite, tmp_path, capsys):
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
    verdicts = {row[0]: row[-1] for row in rows}
    assert verdicts["night-1"] == _stored_verdict(store, "night-1")
    assert verdicts["pr-1"] == _stored_verdict(store, "pr-1") == verdicts["night-1"]
    assert "nightly" in rows[1]


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
