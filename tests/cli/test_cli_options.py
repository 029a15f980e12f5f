"""The command line's own checks: numbers, ids, option combinations, -o paths, --resume."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.cli import build_parser, main
from evals.cli.values import MAX_EVALUATION_ID
from evals.model.errors import ExitCode, SuiteError
from evals.reports.writers import checked_report_path

SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: echo, label: baseline}
  - {id: echo, label: candidate}
tests:
  - vars: {q: hello}
    assert: [{type: contains, value: hello}]
"""


def _parse_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == ExitCode.INVALID_INPUT
    return capsys.readouterr().err


@pytest.mark.slow
@given(value=st.floats(allow_nan=True, allow_infinity=True))
def test_timeouts_must_be_finite_and_above_zero(value: float) -> None:
    parser = build_parser()
    text = repr(value)
    if math.isfinite(value) and value > 0:
        assert parser.parse_args(["run", "s.yaml", "--timeout", text]).timeout == value
    else:
        with pytest.raises(SystemExit):
            parser.parse_args(["run", "s.yaml", "--timeout", text])


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["run", "s.yaml", "--repeat", "0"], "--repeat"),
        (["run", "s.yaml", "-j", "-1"], "--concurrency"),
        (["ci", "nightly", "s.yaml", "--repeat", "0"], "--repeat"),
        (["ci", "pr", "s.yaml", "--timeout", "nan"], "--timeout"),
        (["history", "--limit", "-1"], "--limit"),
        (["dashboard", "--port", "65536"], "--port"),
        (["store", "prune", "--keep", "0"], "--keep"),
        (["calibrate", "f.yaml", "-j", "0"], "--concurrency"),
    ],
)
def test_out_of_range_numbers_are_usage_errors_naming_the_option(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _parse_error(argv, capsys)
    assert option in err and "usage:" in err


@pytest.mark.slow
@given(text=st.text(max_size=80))
def test_evaluation_ids_are_1_to_64_printable_characters(text: str) -> None:
    parser = build_parser()
    argv = ["run", "s.yaml", f"--evaluation-id={text}"]
    valid = 0 < len(text) <= MAX_EVALUATION_ID and text.isprintable() and text == text.strip()
    if valid and text.strip():
        assert parser.parse_args(argv).evaluation_id == text
    else:
        with pytest.raises(SystemExit):
            parser.parse_args(argv)


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--resume", "--no-store"], "--no-store"),
        (["--ray-address", "auto"], "--executor ray"),
        (["--adaptive", "--until-decided"], "--until-decided"),
    ],
)
def test_contradictory_options_are_refused_before_anything_starts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    named: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SUITE)

    assert main(["run", "s.yaml", *extra]) == ExitCode.INVALID_INPUT
    assert named in capsys.readouterr().err
    assert not (tmp_path / ".evals").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "s.yaml", "--env", "nightlyy"],
        ["history", "--env", "nightlyy"],
        ["compare", "--env", "nightlyy"],
        ["triage", "add", "quarantine", "--suite", "s", "--reason", "r", "--env", "nightlyy"],
    ],
)
def test_an_unknown_gate_environment_is_a_usage_error_naming_the_known_ones(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = _parse_error(argv, capsys)
    assert (
        "--env" in err and "'nightlyy'" in err and "(choose from 'pr', 'nightly', 'release')" in err
    )


def test_report_paths_are_absolute_and_checked_before_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.txt").write_text("x")
    (tmp_path / "taken.json").mkdir()

    assert checked_report_path("out/r.md") == tmp_path / "out" / "r.md"
    with pytest.raises(SuiteError, match=r"plain\.txt is a file"):
        checked_report_path("plain.txt/deeper/r.json")
    with pytest.raises(SuiteError, match="is a directory"):
        checked_report_path("taken.json")
    with pytest.raises(SuiteError, match="unknown report format"):
        checked_report_path("r.docx")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_report_in_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(SuiteError, match="cannot be written"):
        checked_report_path(str(locked / "r.json"))


@pytest.mark.slow
def test_resume_of_an_unknown_id_lists_what_can_be_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    (tmp_path / "s.yaml").write_text(SUITE)
    assert main(["run", "s.yaml", "-q", "--evaluation-id", "first"]) == ExitCode.OK
    capsys.readouterr()

    assert main(["run", "s.yaml", "-q", "--resume", "nope"]) == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "--resume nope" in err and "no evaluation to resume" in err

    assert main(["run", "s.yaml", "-q", "--resume"]) == ExitCode.OK
    assert "nothing to resume" in capsys.readouterr().err


@pytest.mark.slow
def test_resume_of_an_unknown_id_names_the_unfinished_evaluations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    (tmp_path / "s.yaml").write_text(SUITE)
    assert main(["run", "s.yaml", "-q", "--evaluation-id", "cut-short"]) == ExitCode.OK
    with sqlite3.connect(tmp_path / ".evals" / "results.db") as connection:
        connection.execute("UPDATE evaluations SET status = 'running'")
    capsys.readouterr()

    assert main(["run", "s.yaml", "-q", "--resume", "nope"]) == ExitCode.INVALID_INPUT
    assert "resume one of cut-short" in capsys.readouterr().err
