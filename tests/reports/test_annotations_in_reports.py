"""People's annotations of runs in the report files: a team runs its suite, a triager
overrides one run's verdict, gives another a thumb and comments on a third from the command
line, and the Markdown, HTML and JSON reports of `evals compare` and `evals regrade` list
each (who, when, which run, what was said) and say that no gate reads them: the verdict
and the exit status are those of the graders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
# the command a user types (the project has a folder named `evals`, which `python -m` would
# import instead of the package)
EVALS = str(Path(sys.executable).with_name("evals"))

AGENTS = """
def steady(prompt, options=None, context=None):
    return {"output": "refund " + prompt.split()[-1]}


def sloppy(prompt, options=None, context=None):
    number = int(prompt.split()[-1])
    return {"output": ("refund " if number % 4 else "no ") + str(number)}
"""


def _suite(project: Path) -> Path:
    cases = "\n".join(
        f'  - description: order {n}\n    vars: {{order: "{n}"}}\n'
        f'    assert: [{{type: contains, value: "refund {n}"}}]'
        for n in range(20)
    )
    path = project / "evals" / "refunds.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "description: refunds desk\n"
        "prompts: ['Refund order {{order}}']\n"
        "providers:\n"
        "  - {id: 'file://../desk/agents.py:steady', label: shipped}\n"
        "  - {id: 'file://../desk/agents.py:sloppy', label: proposed}\n"
        "evaluateOptions: {repeat: 2}\n"
        "gates: {baseline: shipped, candidate: proposed, min_pass_rate: 0.5}\n"
        f"tests:\n{cases}\n"
    )
    return path


def _evals(project: Path, *args: str) -> tuple[int, str]:
    environment = {**os.environ, "EVALS_TRIAGE_ACTOR": "ana@shop.example"}
    log = project / "log.txt"
    with log.open("w") as handle:
        code = subprocess.run(
            [EVALS, *args, "--store", str(project / "results.db")],
            cwd=project,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=environment,
            timeout=300,
        ).returncode
    return code, log.read_text()


def test_annotations_made_from_the_command_line_are_listed_in_every_report(tmp_path):
    project = tmp_path / "shop"
    (project / "desk").mkdir(parents=True)
    (project / "desk" / "agents.py").write_text(AGENTS)
    suite = _suite(project)
    code, printed = _evals(project, "run", str(suite), "--no-progress")
    assert code == 1, printed  # the proposed agent refuses every fourth refund
    evaluation = re.search(r"^evaluation (\w+) in ", printed, re.MULTILINE).group(1)

    code, printed = _evals(
        project,
        "triage",
        "annotate",
        "override",
        "--evaluation",
        evaluation,
        "--case",
        "order-4",
        "--agent",
        "proposed",
        "--repeat",
        "2",
        "--label",
        "pass",
        "--reason",
        "a <b>refused</b> refund is right for order 4 | it was returned",
    )
    assert code == 0, printed
    code, printed = _evals(
        project,
        *("triage", "annotate", "rate", "--evaluation", evaluation, "--case", "order-1"),
        *("--agent", "shipped", "--label", "up", "--by", "bo@shop.example"),
    )
    assert code == 0, printed
    code, printed = _evals(
        project,
        *("triage", "annotate", "comment", "--evaluation", evaluation, "--case", "order-8"),
        *("--agent", "proposed", "--reason", "check the tone"),
    )
    assert code == 0, printed
    # a run the store does not hold is refused, naming it
    code, printed = _evals(
        project,
        *("triage", "annotate", "rate", "--evaluation", evaluation, "--case", "order-1"),
        *("--agent", "proposed", "--repeat", "9", "--label", "up"),
    )
    assert code == 2 and "no stored run of case 'order-1'" in printed, printed

    code, printed = _evals(
        project,
        *("compare", evaluation, evaluation, "--baseline-agent", "shipped"),
        *("--candidate-agent", "proposed", "-o", "compare.md", "-o", "compare.html"),
        *("-o", "compare.json"),
    )
    # the override of a failed run to pass changes no gate: still the graders' verdict
    assert code == 1, printed
    assert "regression fail" in printed
    assert "3 annotation(s) by people on these runs" in printed
    assert "verdict overridden to pass by ana@shop.example" in printed

    markdown = (project / "compare.md").read_text()
    section = markdown.split("### Annotations (3)", 1)[1].split("###", 1)[0]
    assert "change no verdict and no gate" in section
    override = next(line for line in section.splitlines() if "overridden" in line)
    # an address, not a mention: GitHub mentions only an @ that starts a word
    assert "ana@shop.example" in override and "UTC" in override
    assert "order-4 · proposed · repeat 2 · " in override
    assert f"evaluation {evaluation}" in override
    assert "verdict overridden to pass" in override
    assert "\\<b\\>refused\\</b\\>" in override  # the person's words render as text
    assert "thumb up" in section and "bo@shop.example" in section
    assert "check the tone" in section

    page = (project / "compare.html").read_text()
    assert "Annotations (3)" in page and "change no verdict and no gate" in page
    assert "&lt;b&gt;refused&lt;/b&gt;" in page and "<b>refused</b>" not in page

    document = json.loads((project / "compare.json").read_text())
    annotations = document["evals"]["annotations"]
    assert "change no verdict and no gate" in annotations["note"]
    kinds = {item["kind"]: item for item in annotations["items"]}
    assert set(kinds) == {"override", "rate", "comment"}
    assert kinds["override"]["label"] == "pass" and kinds["override"]["repeat"] == 1
    assert kinds["override"]["actor"] == "ana@shop.example"
    assert kinds["override"]["createdAt"].endswith("Z")
    # the verdicts are the graders': the overridden run still failed in the rows
    rows = document["results"]["results"]
    overridden = [
        r
        for r in rows
        if r["metadata"]["evals"]["caseId"] == "order-4" and r["provider"]["label"] == "candidate"
    ]
    assert overridden and not any(r["success"] for r in overridden)

    code, printed = _evals(project, "regrade", evaluation, "-o", "regraded.md")
    assert code == 1, printed
    assert "### Annotations (3)" in (project / "regraded.md").read_text()
