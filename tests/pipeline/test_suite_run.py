"""`evals run` below its command line: `run_suite` runs what the command line is told,
with the same reports, output and exit code, for a caller that never builds arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.cli import main
from evals.model.options import RunOptions
from evals.pipeline.suite_run import RunRequest, run_suite

SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: echo, label: baseline}
  - {id: echo, label: candidate}
tests:
  - vars: {q: hello}
    assert: [{type: contains, value: hello}]
  - vars: {q: goodbye}
    assert: [{type: contains, value: hello}]
"""


def _rows(report: Path) -> list[tuple[str, bool]]:
    rows = json.loads(report.read_text(encoding="utf-8"))["results"]["results"]
    return sorted((row["vars"]["q"], row["success"]) for row in rows)


@pytest.mark.slow
def test_run_suite_does_what_evals_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    monkeypatch.delenv("PROMPTFOO_FAILED_TEST_EXIT_CODE", raising=False)
    (tmp_path / "my-suite.yaml").write_text(SUITE, encoding="utf-8")

    by_command = main(["run", "my-suite.yaml", "-r", "2", "-q", "--no-store", "-o", "cli.json"])
    said_by_command = capsys.readouterr()
    request = RunRequest(
        suite="my-suite.yaml",
        options=RunOptions(repeat=2, use_store=False, progress=False),
        outputs=["lib.json"],
        quiet=True,
    )
    by_library = run_suite(request)
    said_by_library = capsys.readouterr()

    assert by_command == by_library == 100  # promptfoo's failing code: one case fails
    assert _rows(tmp_path / "cli.json") == _rows(tmp_path / "lib.json")
    assert _rows(tmp_path / "lib.json") == [("goodbye", False)] * 4 + [("hello", True)] * 4
    assert said_by_command.out == said_by_library.out
    assert f"wrote {tmp_path / 'lib.json'}" in said_by_library.err
    assert not (tmp_path / ".evals").exists()


@pytest.mark.slow
def test_a_reused_baseline_does_not_speak_for_the_response_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stored baseline answers through the response cache; only `--cache` asks for the
    cache's own line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    (tmp_path / "my-suite.yaml").write_text(SUITE, encoding="utf-8")
    argv = ["run", "my-suite.yaml", "-r", "2", "--no-progress"]
    main(argv)
    capsys.readouterr()

    main(argv)
    reused = capsys.readouterr()
    main([*argv, "--cache"])
    cached = capsys.readouterr()

    assert "stored run(s) reused" in reused.out
    assert "response cache:" not in reused.err
    assert "response cache:" in cached.err
