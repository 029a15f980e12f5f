"""How much a report holds is the user's to set: `reports:` in the suite and the command
line's flags, checked when the suite loads (a bad value names its line, exit 2)."""

from __future__ import annotations

import collections
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evals.model.defaults import DEFAULT_HTML_RUN_DETAILS, DEFAULT_RUNS_IN_MEMORY
from evals.model.errors import SuiteError
from evals.suite import load_suite


def _project(tmp_path: Path, reports: object = None) -> Path:
    """A team's 20-case triage suite, one case in four failing, `reports:` as given."""
    config: dict[str, object] = {
        "description": "claims triage",
        "prompts": ["{{claim}}"],
        "providers": [{"id": "echo", "label": "triager"}],
        "tests": [
            {
                "vars": {"claim": f"claim {i}"},
                "assert": [{"type": "equals", "value": f"claim {i}" if i % 4 else "deny"}],
            }
            for i in range(20)
        ],
    }
    if reports is not None:
        config["reports"] = reports
    path = tmp_path / "claims" / "promptfooconfig.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_defaults_when_the_suite_says_nothing(tmp_path):
    settings = load_suite(_project(tmp_path)).reports
    assert settings.html_run_details == DEFAULT_HTML_RUN_DETAILS == 2000
    assert settings.runs_in_memory == DEFAULT_RUNS_IN_MEMORY == 5000


def test_the_suite_sets_them_without_changing_its_fingerprint(tmp_path):
    plain = load_suite(_project(tmp_path))
    tuned = load_suite(_project(tmp_path, {"html_run_details": 7, "runs_in_memory": 0}))
    assert (tuned.reports.html_run_details, tuned.reports.runs_in_memory) == (7, 0)
    assert tuned.fingerprint == plain.fingerprint


@pytest.mark.parametrize(
    ("reports", "said"),
    [
        ({"html_run_details": 0}, "reports.html_run_details"),
        ({"html_run_details": 2.5}, "reports.html_run_details"),
        ({"runs_in_memory": -1}, "reports.runs_in_memory"),
        ({"runs_in_memory": "many"}, "reports.runs_in_memory"),
        ({"html_run_detail": 10}, "did you mean 'html_run_details'"),
        ([1, 2], "reports must be a mapping"),
    ],
)
def test_a_bad_value_names_the_setting_and_its_line(tmp_path, reports, said):
    path = _project(tmp_path, reports)
    with pytest.raises(SuiteError) as raised:
        load_suite(path)
    message = str(raised.value)
    assert said in message
    lines = path.read_text().splitlines()
    reports_line = next(i for i, line in enumerate(lines, 1) if line.startswith("reports:"))
    assert raised.value.line in (reports_line, reports_line + 1)


def _evals(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evals", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _shown(page: str) -> dict[str, int]:
    found = re.findall(r'<summary><span class="status-\w+">(\w+)</span>', page)
    return dict(collections.Counter(found))


@pytest.mark.slow
def test_the_html_cap_from_the_suite_and_from_the_flag(tmp_path):
    """60 runs, 15 failing: the suite caps the details at 10 (the failing ones, 10 of
    them); the flag, which wins, at 100 (every run)."""
    suite = _project(tmp_path, {"html_run_details": 10})
    ran = _evals("run", str(suite), "--repeat", "3", "-o", "capped.html", cwd=tmp_path)
    assert ran.returncode in (1, 100), ran.stderr  # a gate failed, or stayed undetermined
    page = (tmp_path / "capped.html").read_text(encoding="utf-8")
    assert "60 runs: shown here are the 10 that did not pass (at most 10)" in page
    assert _shown(page) == {"FAIL": 10}
    ran = _evals(
        "run", str(suite), "--repeat", "3", "-o", "whole.html", "--html-run-details", "100",
        cwd=tmp_path,
    )  # fmt: skip
    whole = (tmp_path / "whole.html").read_text(encoding="utf-8")
    assert _shown(whole) == {"PASS": 45, "FAIL": 15}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flag", "value"), [("--html-run-details", "0"), ("--runs-in-memory", "-3")]
)
def test_a_bad_flag_is_refused_before_any_run(tmp_path, flag, value):
    suite = _project(tmp_path)
    ran = _evals("run", str(suite), flag, value, "-o", "out.html", cwd=tmp_path)
    assert ran.returncode == 2
    assert flag in ran.stderr and "must be at least" in ran.stderr
    assert not (tmp_path / ".evals").exists() and not (tmp_path / "out.html").exists()


@pytest.mark.slow
def test_a_bad_suite_setting_exits_2_naming_the_file_and_line(tmp_path):
    suite = _project(tmp_path, {"runs_in_memory": "lots"})
    ran = _evals("run", str(suite), "-o", "out.csv", cwd=tmp_path)
    assert ran.returncode == 2
    assert "promptfooconfig.yaml" in ran.stderr and "reports.runs_in_memory" in ran.stderr
    assert not (tmp_path / "out.csv").exists()
