"""`evals run` as a CI log shows it: stdout piped to a file, no terminal.

The tables are not cropped (every column, every whole case name), COLUMNS is honoured,
similar long case names never read the same, and the output ends with a block naming each
failing gate in one line, the evaluation, its store and commands that work as printed.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

INJECTED = [f"instrucción-inyectada-en-un-titular-{t}" for t in ("nave", "lumi", "vera", "busi")]
CASES = [*INJECTED, "cuenta-con-la-calculadora", "ticker-desconocido-acme"]

AGENT = """
def shipped(prompt, options, context):
    return {"output": "ok " + prompt}


def proposed(prompt, options, context):
    if "titular" in prompt:
        return {"output": "ignored the headline"}
    return {"output": "ok " + prompt}
"""


def _suite(gates: str) -> str:
    tests = "\n".join(
        f"  - description: {name}\n    vars: {{q: {name}}}\n"
        "    assert: [{type: starts-with, value: ok}]"
        for name in CASES
    )
    return (
        "prompts: ['{{q}}']\n"
        "providers:\n"
        "  - {id: file://agent.py:shipped, label: shipped}\n"
        "  - {id: file://agent.py:proposed, label: proposed}\n"
        f"{gates}"
        "evaluateOptions: {repeat: 4}\n"
        f"tests:\n{tests}\n"
    )


GATES = "gates: {baseline: shipped, candidate: proposed, min_pass_rate: 0.9}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A team's folder: their agent file and suite, where they run `evals` from."""
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(_suite(GATES), encoding="utf-8")
    return tmp_path


def _evals(project: Path, *args: str, columns: str | None = None) -> tuple[int, str]:
    """Run `evals` there with stdout piped to a file, as a CI runner does."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "EVALS_STORE_URL")}
    if columns is not None:
        env["COLUMNS"] = columns
    log = project / "ci.log"
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            [sys.executable, "-m", "evals", *args],
            cwd=project,
            env=env,
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=180,
        )
    return done.returncode, log.read_text(encoding="utf-8")


def _last_block(output: str) -> list[str]:
    lines = output.rstrip("\n").splitlines()
    return lines[len(lines) - lines[::-1].index("") :]


def test_a_log_shows_every_column_and_whole_names_and_ends_with_what_to_do(project: Path) -> None:
    code, output = _evals(project, "run", "suite.yaml", "--no-progress", "--store", "s.db")
    assert code == 1
    lines = output.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("Case "))
    assert header.split() == ["Case", "P", "shipped", "proposed", "Δ", "[interval]", "q", "Verdict"]
    rows = {line.split()[0]: line for line in lines if line.startswith(" ") and "/4" in line}
    assert sorted(rows) == sorted(CASES)  # each whole name, each once
    assert all(line.split()[-1] in ("regression", "inconclusive") for line in rows.values())
    assert "…" not in output
    assert all(line == line.rstrip() for line in lines)

    block = _last_block(output)
    assert block[0] == "❌ Gate verdict: FAIL"
    failing = [line for line in block if line.startswith("  ❌ ")]
    assert [line.split()[1:3] for line in failing] == [
        ["min_pass_rate", "fail:"],
        ["regression", "fail:"],
    ]
    assert "proposed pass rate 0.333" in failing[0] and "; " not in failing[0]
    (evaluation,) = sqlite3.connect(project / "s.db").execute("SELECT id FROM evaluations")
    assert block[-3] == f"evaluation {evaluation[0]} in s.db"
    assert block[-2].startswith(f"next: evals compare {evaluation[0]} --store s.db   (")
    assert block[-1].strip() == "evals dashboard --store s.db"

    # The command works as printed: after the next run, it compares it with this one.
    _evals(project, "run", "suite.yaml", "--no-progress", "--store", "s.db")
    command = shlex.split(block[-2].removeprefix("next: ").split("   (")[0])
    code, compared = _evals(project, *command[1:])
    assert code == 1 and "Gate verdict: FAIL" in compared


def test_columns_is_honoured_and_cases_too_long_for_it_get_short_ids(project: Path) -> None:
    code, output = _evals(project, "run", "suite.yaml", "--no-store", "--no-progress", columns="80")
    assert code == 1
    lines = output.splitlines()
    block = _last_block(output)
    # Every line fits but the block's verdict, which is never cut or wrapped.
    assert max(len(line) for line in lines if line != block[1]) <= 80
    rows = [line.split() for line in lines if line.startswith(" c") and "/4" in line]
    assert [row[0] for row in rows] == [f"c{i}" for i in range(1, len(CASES) + 1)]
    assert all(row[-1] in ("regression", "inconclusive") for row in rows)  # Verdict kept
    legend = dict(line.split("  ", 1) for line in lines if re.match(r"c\d+ +\S", line))
    assert {short.strip(): name.strip() for short, name in legend.items()} == {
        f"c{i}": name for i, name in enumerate(CASES, 1)
    }
    assert _last_block(output)[-1] == next(line for line in lines if line.startswith("evaluation "))
    assert _last_block(output)[-1].endswith("(not stored)")


def test_without_gates_the_last_block_explains_the_exit_code(project: Path) -> None:
    (project / "suite.yaml").write_text(_suite(""), encoding="utf-8")
    code, output = _evals(project, "run", "suite.yaml", "--no-store", "--no-progress")
    assert code == 100
    block = _last_block(output)
    assert block[0].startswith("❌ No gates: block, so promptfoo's rule decides: ")
    assert (
        f"{2 * 4 * len(CASES) - 4 * len(INJECTED)} of {2 * 4 * len(CASES)} runs passed" in block[0]
    )
    assert "below PROMPTFOO_PASS_RATE_THRESHOLD 100 %: exit code 100" in block[0]
    assert "Gate verdict" not in "\n".join(block)
