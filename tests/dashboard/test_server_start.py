"""`evals dashboard` starts quietly: Streamlit's notices about running its pages before its
runtime exists (the server's warm-up does so on purpose) and its "please restart" notice
about the server options are not printed; the address is."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals.cli import main

pytestmark = pytest.mark.slow

SUITE = """\
prompts: ['{{q}}']
providers: [echo]
tests:
  - vars: {q: hello}
    assert: [{type: contains, value: hello}]
gates: {}
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_dashboard_starts_without_streamlits_warm_up_notices(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    store = str(tmp_path / "results.db")
    assert main(["run", str(tmp_path / "suite.yaml"), "--store", store, "--quiet"]) == 0
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    env = {k: v for k, v in os.environ.items() if k != "EVALS_STORE_URL"}
    with out.open("w") as stdout, err.open("w") as stderr:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evals",
                "dashboard",
                "--store",
                store,
                "--port",
                str(_free_port()),
            ],
            cwd=tmp_path,
            env=env,
            stdout=stdout,
            stderr=stderr,
        )
        try:
            deadline = time.monotonic() + 180
            while "URL:" not in out.read_text() and time.monotonic() < deadline:
                assert server.poll() is None, err.read_text()
                time.sleep(0.5)
        finally:
            server.terminate()
            server.wait(timeout=30)
    printed = out.read_text() + err.read_text()
    assert "URL: http://127.0.0.1:" in printed
    assert "No runtime found" not in printed
    assert "missing ScriptRunContext" not in printed
    assert "please restart streamlit" not in printed
    assert "failed while the server started" not in printed
