"""The plugin example, installed from its own folder into a fresh venv as a team would
install its package, adds an agent adapter, an assertion type, a gate and a report format,
and `evals run` uses each of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "cases" / "examples" / "plugin"
pytestmark = pytest.mark.slow


def _uv() -> str | None:
    local = ROOT / ".ci" / "uv" / "bin" / "uv"
    return str(local) if local.exists() else shutil.which("uv")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fresh venv with evals (editable, from this checkout) and a copy of the example
    package installed with `pip install -e` of its folder; the copy's folder."""
    home = tmp_path_factory.mktemp("team")
    project = home / "acme-evals"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    env_dir = home / "venv"
    uv = _uv()
    if uv is not None:
        subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(env_dir)], check=True)
        install = [uv, "pip", "install", "-q", "--python", str(env_dir / "bin" / "python")]
    else:
        subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
        install = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q"]
    done = subprocess.run(
        [*install, "-e", str(ROOT), "-e", str(project)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return env_dir, project


def _evals(venv: tuple[Path, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env_dir, project = venv
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVALS_DISABLE_PLUGINS")}
    env["COLUMNS"] = "120"
    return subprocess.run(
        [str(env_dir / "bin" / "evals"), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_evals_run_uses_the_plugin_s_agent_assertion_gate_and_report(
    venv: tuple[Path, Path],
) -> None:
    done = _evals(
        venv, "run", "suite.yaml", "--no-store", "-o", "summary.acme.txt", "-o", "out.json"
    )
    assert done.returncode == 1, done.stderr + done.stdout
    project = venv[1]

    report = json.loads((project / "out.json").read_text(encoding="utf-8"))
    rows = report["results"]["results"]
    assert {row["provider"]["label"] for row in rows} == {"v1", "v2"}
    assert all(row["response"]["output"].endswith("we are on it.") for row in rows)
    graded = [c for row in rows for c in row["gradingResult"]["componentResults"]]
    assert {c["assertion"]["type"] for c in graded} == {"acme:ticket-cited"}
    v1 = [row["success"] for row in rows if row["provider"]["label"] == "v1"]
    v2 = [row["success"] for row in rows if row["provider"]["label"] == "v2"]
    assert all(v1) and not all(v2)
    assert any("does not name ACME-10" in c["reason"] for c in graded)

    gates = {g["name"]: g for g in report["evals"]["gates"]["gates"]}
    spend = gates["acme_spend_per_run"]
    assert spend["status"] == "fail" and spend["threshold"] == 0.0025
    assert spend["measured"] == pytest.approx(0.003)

    summary = (project / "summary.acme.txt").read_text(encoding="utf-8")
    assert summary.startswith("acme verdict: FAIL\n")
    assert "gate acme_spend_per_run: fail (v2 spent $0.0030 per run" in summary
    assert "agent v1: 100% of cases passed" in summary


def test_evals_plugins_lists_one_extension_of_each_kind(venv: tuple[Path, Path]) -> None:
    done = _evals(venv, "plugins")
    assert done.returncode == 0, done.stdout + done.stderr
    for line in (
        "acme:ticket-cited = acme_evals.graders:ticket_cited (acme-evals 1.0.0)",
        "acme_spend_per_run = acme_evals.gates:SPEND_PER_RUN (acme-evals 1.0.0)",
        ".acme.txt = acme_evals.report:render_summary (acme-evals 1.0.0)",
        "acme = acme_evals.agent:SupportBot (acme-evals 1.0.0)",
    ):
        assert line in done.stdout


def test_the_plugin_checks_its_provider_config_before_any_run(venv: tuple[Path, Path]) -> None:
    project = venv[1]
    suite = (project / "suite.yaml").read_text(encoding="utf-8")
    (project / "typo.yaml").write_text(suite.replace("release: v2", "release: v3"))
    done = _evals(venv, "validate", "typo.yaml")
    assert done.returncode == 2
    assert "unknown release 'v3'" in done.stderr and "use one of v1, v2" in done.stderr


def test_a_gate_key_of_the_plugin_is_checked_by_its_gate(venv: tuple[Path, Path]) -> None:
    project = venv[1]
    suite = (project / "suite.yaml").read_text(encoding="utf-8")
    (project / "bad_gate.yaml").write_text(
        suite.replace("spend_per_run: 0.0025", "spend_per_run: -1")
    )
    (project / "typo_gate.yaml").write_text(
        suite.replace("acme_spend_per_run", "acme_spend_per_rn")
    )
    done = _evals(venv, "validate", "bad_gate.yaml")
    assert done.returncode == 2
    assert "gates.acme_spend_per_run: must be a positive number of dollars" in done.stderr
    done = _evals(venv, "validate", "typo_gate.yaml")
    assert done.returncode == 2
    assert "did you mean 'acme_spend_per_run'?" in done.stderr


def test_without_plugins_the_suite_names_what_is_missing(venv: tuple[Path, Path]) -> None:
    env_dir, project = venv
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(env_dir / "bin" / "evals"), "validate", "suite.yaml"],
        cwd=project,
        env={**env, "EVALS_DISABLE_PLUGINS": "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "unknown provider id 'acme:support-bot'" in done.stderr
