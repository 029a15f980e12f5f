"""What CI runs is what the README tells a newcomer to run.

`.ci/run` (which the GitHub workflow runs) must run the README Quickstart's two commands
character for character, the test command before any other pytest run and with nothing
the README does not install, then every test tier the fast tier leaves out or skips.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from tests import tiers

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text("utf-8"))


def _section(markdown: str, title: str) -> str:
    """The text under the `## title` heading, up to the next `## ` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def _bash_blocks(markdown: str) -> list[str]:
    return [b.strip() for b in re.findall(r"^```bash\n(.*?)^```", markdown, re.M | re.S)]


def _script_lines() -> list[str]:
    """The script's commands, one per line, without comments and indentation."""
    lines = (line.strip() for line in CI_RUN.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


QUICKSTART = _bash_blocks(_section(README, "Quickstart"))


def test_the_quickstart_is_two_one_line_commands_setup_then_tests() -> None:
    assert len(QUICKSTART) == 2, QUICKSTART
    setup, tests = QUICKSTART
    assert "\n" not in setup and "\n" not in tests
    assert "pip install -e '.[dev]'" in setup
    assert shlex.split(tests)[-2:] == ["-m", "pytest"]


def test_ci_runs_the_quickstart_setup_as_written_and_expects_the_demos_verdict() -> None:
    setup, _ = QUICKSTART
    (line,) = [line for line in _script_lines() if line.startswith(setup)]
    # The demo's candidate regresses on purpose: the command's exit code 1 is kept and checked.
    assert line == f"{setup} || demo=$?"
    assert '[ "$demo" != 1 ]' in CI_RUN and "Gate verdict: FAIL" in CI_RUN


def test_ci_runs_the_quickstart_test_command_as_written_before_any_other_test_run() -> None:
    setup, tests = QUICKSTART
    lines = _script_lines()
    runs = [i for i, line in enumerate(lines) if "pytest" in line and "-m pytest" in line]
    assert lines[runs[0]] == tests
    setup_at = next(i for i, line in enumerate(lines) if line.startswith(setup))
    assert setup_at < runs[0]
    between = lines[setup_at + 1 : runs[0]]
    # Nothing is installed into the README's venv, and no service is offered to its tests.
    assert not [
        line for line in between if ".venv/bin/pip install" in line and "--target" not in line
    ]
    unset = next(line for line in between if line.startswith("unset "))
    for variable in ("EVALS_TEST_POSTGRES_URL", "EVALS_TEST_CHROMIUM", "EVALS_PROMPTFOO"):
        assert variable in unset.split()


def test_ci_then_runs_every_tier_the_fast_tier_leaves_out_or_skips() -> None:
    (later,) = [line for line in _script_lines() if "-m pytest -m" in line]
    expression = shlex.split(later)[-1]
    markers = set(re.split(r"\s+or\s+", expression))
    assert markers == {*tiers.SLOWER_TIERS, "postgres", "extra"}
    assert later.startswith(".ci/venv/bin/python")
    extras = re.search(r"-e '\.\[([^\]]*)\]'", CI_RUN[CI_RUN.index(".ci/uv/bin/uv pip install") :])
    assert extras is not None
    assert set(extras.group(1).split(",")) == {"dev", *tiers.EXTRA_MODULES}


def test_the_workflow_runs_the_script() -> None:
    steps = [step.get("run", "") for job in WORKFLOW["jobs"].values() for step in job["steps"]]
    assert "bash .ci/run" in steps
