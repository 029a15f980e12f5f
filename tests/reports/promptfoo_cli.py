"""Run the real promptfoo CLI on a report file, for the import tests, and node scripts over
the packages installed with it, for the tests that compare with them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

PROMPTFOO = Path(os.environ.get("EVALS_PROMPTFOO") or shutil.which("promptfoo") or "promptfoo")

NODE_MODULES = Path(os.path.abspath(PROMPTFOO)).parent.parent
"""The node_modules folder promptfoo is installed in (its dependencies beside it)."""

needs_promptfoo = pytest.mark.promptfoo
"""Runs the promptfoo CLI: a slower tier, skipped where the CLI is missing (tests/tiers.py)."""


def promptfoo_import(report: Path, work: Path) -> dict[str, str]:
    """`promptfoo import REPORT` with a fresh HOME in `work`; asserts it succeeded and
    returns the environment it ran with (its database is under that HOME)."""
    home = work / "home"
    home.mkdir(exist_ok=True)
    env = os.environ | {
        "HOME": str(home),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }
    done = subprocess.run(
        [str(PROMPTFOO), "import", str(report)],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "successfully imported" in done.stdout + done.stderr
    return env


def node_answer(script: str, argument: Path, payload: Any, marker: str, timeout: float) -> Any:
    """Run `script` in node with `argument`, `payload` as JSON on its stdin; the JSON it
    printed after a line starting with `marker` (so warnings printed before do not matter)."""
    done = subprocess.run(
        ["node", "-e", script, str(argument)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        encoding="utf-8",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.rsplit(f"\n{marker} ", 1)[1])
