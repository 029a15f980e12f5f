"""One table of report formats: the suffixes `-o`, `evals merge` and the pytest plugin accept,
the renderer each chooses and the help text all come from `evals.reports.formats.FORMATS`."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from evals.cli import build_parser
from evals.model.errors import SuiteError
from evals.reports.formats import FORMATS, builtin_suffixes
from evals.reports.writers import find_format, is_report_path, renderer_for
from evals.testing.plugin import pytest_addoption

SUFFIXES = builtin_suffixes()


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_every_suffix_of_the_table_is_a_report_for_run_and_merge(suffix: str) -> None:
    fmt = find_format(f"out/report{suffix.upper()}")
    assert fmt is not None and suffix in fmt.suffixes
    assert is_report_path(f"merged{suffix}")
    module, function = fmt.renderer.split(":")
    assert renderer_for(Path(f"r{suffix}")) is getattr(importlib.import_module(module), function)


def test_merge_takes_a_markdown_file_for_a_report_and_a_store_for_a_store() -> None:
    assert is_report_path("summary.markdown")
    assert not is_report_path("results.db")
    assert not is_report_path("sqlite:///shards/merged.md")
    assert not is_report_path("postgresql+psycopg://host/db")


def test_the_longest_suffix_chooses_the_format() -> None:
    junit = next(f for f in FORMATS if ".junit.xml" in f.suffixes)
    assert find_format("ci.junit.xml") is junit
    assert find_format("ci.xml") is junit
    assert find_format("notes.txt") is None
    with pytest.raises(SuiteError, match="unknown report format") as raised:
        renderer_for(Path("r.docx"))
    assert all(suffix in str(raised.value) for suffix in SUFFIXES)


def test_only_the_json_report_is_written_while_the_runs_complete() -> None:
    assert [f.suffixes for f in FORMATS if f.streamed] == [(".json",)]


def _help(parser: Any, command: str) -> str:
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return " ".join(sub.format_help().split())


@pytest.mark.parametrize("command", ["run", "merge", "regrade", "compare"])
def test_the_commands_help_names_every_suffix(command: str) -> None:
    text = _help(build_parser(), command)
    assert all(f" {suffix}" in text for suffix in SUFFIXES), text


class _Recorder:
    """Stands for pytest's parser: keeps each option's help."""

    def __init__(self) -> None:
        self.helps: dict[str, str] = {}

    def getgroup(self, *args: Any) -> _Recorder:
        return self

    def addoption(self, name: str, **kwargs: Any) -> None:
        self.helps[name] = kwargs.get("help", "")

    def addini(self, *args: Any, **kwargs: Any) -> None:
        pass


def test_the_pytest_plugin_help_names_every_suffix() -> None:
    recorder = _Recorder()
    pytest_addoption(recorder)  # type: ignore[arg-type]
    assert all(suffix in recorder.helps["--evals-output"] for suffix in SUFFIXES)


def test_docs_list_exactly_the_table_s_suffixes() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "reports.md").read_text(encoding="utf-8")
    table = docs.split("| extension | content |", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"`(\.[a-z.]+)`", table))
    assert documented == set(SUFFIXES)
