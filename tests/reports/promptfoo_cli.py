"""Run the real promptfoo CLI on a report file, for the import tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

PROMPTFOO = Path(os.environ.get("EVALS_PROMPTFOO") or shutil.which("promptfoo") or "promptfoo")

needs_promptfoo = pytest.mark.skipif(
    shutil.which("node") is None or not PROMPTFOO.exists(), reason="promptfoo is not installed"
)


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
