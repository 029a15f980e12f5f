"""A cost the harness cannot work out (a model without a price) is unknown, never $0: the
budget's max_cost is not checked and says why, the cost gates are undetermined with the
fix, every report says "unknown", and a `prices:` entry makes it known."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evals.cli import main

# Each test runs whole evaluations through the command line.
pytestmark = pytest.mark.slow

AGENTS = """
def agent(prompt, options, context):
    return {
        "output": "done",
        "stopReason": "done",
        "trajectory": [
            {"kind": "model", "name": "local-llm"},
            {"kind": "tool", "name": "lookup_order", "arguments": {"id": "A1"}},
            {"kind": "model", "name": "local-llm"},
        ],
    }
"""


def _suite(write_suite, extra: str = "") -> Path:
    tests = "\n".join(f"  - vars: {{n: {n}}}" for n in range(4))
    return write_suite(
        "prompts: ['order {{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:agent, label: baseline}\n"
        "  - {id: file://agents.py:agent, label: candidate}\n"
        "evaluateOptions: {repeat: 2}\n"
        "gates: {baseline: baseline, candidate: candidate, max_cost_ratio: 1.5,"
        " max_cost_per_accepted: 0.1}\n"
        "tools: [{name: lookup_order, effect: read}]\n"
        f"{extra}"
        "defaultTest:\n"
        "  assert:\n"
        "    - {type: policy}\n"
        "    - {type: budget, value: {max_steps: 4, max_cost: 0.01, stop_reason: done}}\n"
        f"tests:\n{tests}\n",
        files={"agents.py": AGENTS},
    )


def _run(path: Path, tmp_path: Path, capsys) -> tuple[int, str, dict[str, str]]:
    outputs = {ext: tmp_path / f"report.{ext}" for ext in ("json", "html", "md", "xml")}
    args = ["run", str(path), "--no-store", "--no-progress"]
    for output in outputs.values():
        args += ["-o", str(output)]
    code = main(args)
    captured = capsys.readouterr()
    texts = {ext: output.read_text(encoding="utf-8") for ext, output in outputs.items()}
    return code, " ".join((captured.out + captured.err).split()), texts


def test_unknown_cost_is_unknown_everywhere_with_the_fix(write_suite, tmp_path, capsys):
    """Before: the budget raised "no price for model", every run became a grader_error row
    (its policy grade dropped), and the reports showed a cost of $0.0000."""
    code, out, texts = _run(_suite(write_suite), tmp_path, capsys)

    fix = "add it to the suite's prices: ({local-llm: {input: 0.15, output: 0.6}}"
    assert "no price for model 'local-llm'" in out and fix in out
    assert "cost unknown for 8 of 8 runs of baseline and 8 of 8 runs of candidate" in out
    assert re.search(r"cost_ratio\s+undetermined\s+cost unknown for 8 of 8 runs", out)
    assert re.search(r"cost_per_accepted\s+undetermined\s+cost unknown for 8 of 8 runs", out)
    assert code == 0  # undetermined warns outside a release; the runs passed on what is known

    document = json.loads(texts["json"])
    rows = document["results"]["results"]
    assert {r["metadata"]["evals"]["status"] for r in rows} == {"pass"}
    assert {r["cost"] for r in rows} == {None}
    assert {r["metadata"]["evals"]["costUnknown"] for r in rows} == {"local-llm"}
    budget = rows[0]["gradingResult"]["componentResults"][1]
    assert budget["reason"].startswith("within budget (2 check(s)); cost unknown, max_cost not")
    agents = document["evals"]["summary"]["agents"]
    assert {(a["total_cost"], a["unknown_cost_runs"]) for a in agents} == {(None, 8)}

    for ext in ("html", "md", "xml"):
        assert "$0.0000" not in texts[ext], ext
        assert "unknown" in texts[ext], ext
    assert re.search(r"<td>unknown</td><td>unknown</td>", texts["html"])
    assert "| unknown | unknown |" in texts["md"]
    assert 'name="mean_cost" value="unknown"' in texts["xml"]


def test_a_prices_entry_makes_the_cost_known(write_suite, tmp_path, capsys):
    path = _suite(write_suite, "prices: {local-llm: {input: 1000, output: 1000}}\n")
    code, out, texts = _run(path, tmp_path, capsys)

    assert "unknown" not in out
    rows = json.loads(texts["json"])["results"]["results"]
    costs = {r["cost"] for r in rows}
    assert None not in costs and all(cost > 0 for cost in costs)
    assert "costUnknown" not in rows[0]["metadata"]["evals"]
    assert re.search(r"cost_ratio\s+(pass|undetermined)\s+candidate/baseline mean cost", out)
    assert code in (0, 1)


def test_an_agent_naming_an_unpriced_model_is_named_at_load(write_suite, capsys):
    """Where the suite can know it before running (the model is in the provider id), it
    says so once, at load: `evals validate` and `evals run` alike."""
    path = write_suite(
        "prompts: ['{{q}}']\n"
        "providers: [{id: 'openai:chat:my-finetune', label: candidate}]\n"
        "tests:\n"
        "  - vars: {q: hi}\n"
        "    assert: [{type: budget, value: {max_cost: 0.01}}]\n"
    )
    assert main(["validate", str(path)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "warning: agent 'candidate': its cost will be unknown, no price for model "
        "'my-finetune': add it to the suite's prices:"
    ) in err
    priced = path.parent / "priced.yaml"
    priced.write_text(
        path.read_text(encoding="utf-8") + "prices: {my-finetune: {input: 1, output: 2}}\n",
        encoding="utf-8",
    )
    assert main(["validate", str(priced)]) == 0
    assert "cost will be unknown" not in capsys.readouterr().err
