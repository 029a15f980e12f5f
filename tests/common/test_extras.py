"""A feature whose package extra is missing fails before any run, with exit code 2 and the
extra to install.

The extras are installed here (the dev extra holds them all), so each test hides the
modules of one extra from `importlib.util.find_spec`, which is how the harness looks for
them without importing them.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evals.cli import main
from evals.common.extras import EXTRAS, missing_modules, require_extra
from evals.model.errors import ExitCode, SuiteError

SUITE = """\
prompts: ["{{q}}"]
providers: [echo]
tests:
  - vars: {q: the cat sat on the mat}
    assert:
      - {type: contains, value: cat}
      - {type: meteor, value: the cat sat on a mat}
"""


@pytest.fixture
def hide(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Make the modules of one extra look uninstalled to `find_spec`."""
    real = importlib.util.find_spec

    def hide_extra(extra: str) -> None:
        hidden = set(EXTRAS[extra])

        def find_spec(name: str, package: str | None = None) -> object:
            return None if name.split(".")[0] in hidden else real(name, package)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    return hide_extra


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def test_every_extra_is_installed_in_the_test_environment() -> None:
    assert {extra: missing_modules(extra) for extra in EXTRAS} == {e: [] for e in EXTRAS}


def test_a_missing_extra_names_itself_and_the_install_command(hide) -> None:
    hide("ray")

    with pytest.raises(SuiteError) as raised:
        require_extra("ray", "--executor ray", file="suite.yaml", line=7)

    error = raised.value
    assert (error.file, error.line) == ("suite.yaml", 7)
    assert "needs the [ray] extra (ray not installed)" in error.message
    assert error.fix is not None and "pip install 'evals-harness[ray]'" in error.fix


def test_meteor_needs_no_extra(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (in_tmp / "suite.yaml").write_text(SUITE, encoding="utf-8")
    monkeypatch.setitem(sys.modules, "nltk", None)  # importing nltk now fails

    assert main(["run", "suite.yaml", "--no-progress", "--no-store"]) == ExitCode.OK


@pytest.mark.parametrize(
    ("extra", "arguments"),
    [
        ("postgres", ["run", "suite.yaml", "--store", "postgresql://u@localhost/db"]),
        ("ray", ["run", "suite.yaml", "--no-store", "--executor", "ray"]),
        ("dashboard", ["dashboard"]),
    ],
)
def test_commands_needing_a_missing_extra_exit_2_naming_it(
    hide, in_tmp: Path, capsys: pytest.CaptureFixture[str], extra: str, arguments: list[str]
) -> None:
    (in_tmp / "suite.yaml").write_text(SUITE, encoding="utf-8")
    hide(extra)

    code = main([*arguments, "--no-progress"] if arguments[0] == "run" else arguments)

    assert code == ExitCode.INVALID_INPUT
    assert f"[{extra}] extra" in capsys.readouterr().err
