"""`evals triage` end to end: a quarantined P0 case stops failing the next `evals run`,
is listed in its report, and fails it again once expired or removed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evals.cli import main
from tests.triage_suite import run_triage_suite, stored_suite_id, write_triage_suite


@pytest.fixture
def suite(tmp_path) -> str:
    return str(write_triage_suite(tmp_path))


def _run(suite: str, store: str, capsys) -> tuple[int, str]:
    code = run_triage_suite(Path(suite), store)
    return code, " ".join(capsys.readouterr().out.split())


@pytest.mark.slow
def test_a_quarantine_stops_blocking_until_it_expires(suite, tmp_path, capsys, monkeypatch):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    code, out = _run(suite, store, capsys)
    assert code == 1, out
    assert "quarantined" not in out
    suite_id = stored_suite_id(store)

    monkeypatch.setenv("EVALS_TRIAGE_ACTOR", "ci-bot")
    add = ["triage", "add", "quarantine", "--suite", suite_id, "--case"]
    assert (
        main(
            [
                *add,
                "case-1",
                "--env",
                "nightly",
                "--until",
                "3d",
                "--reason",
                "other env",
                "--store",
                store,
            ]
        )
        == 0
    )
    capsys.readouterr()
    code, out = _run(suite, store, capsys)
    assert code == 1, "a quarantine of another environment must not hold"

    case_id = "case-1"
    assert (
        main(
            [
                *add,
                case_id,
                "--env",
                "pr",
                "--until",
                "12h",
                "--reason",
                "quote feed flaky",
                "--link",
                "https://example.com/t/1",
                "--store",
                store,
            ]
        )
        == 0
    )
    listed = capsys.readouterr().out
    assert "ci-bot" in listed and "quote feed flaky" in listed

    code, out = _run(suite, store, capsys)
    assert code == 0, out
    assert "1 case(s) quarantined, 1 expiring within a day" in out
    assert "quarantined case-1 until" in out and "by ci-bot: quote feed flaky" in out
    assert "baseline 6/6 vs candidate 0/6" in out
    assert "1 quarantined case(s) left out: case-1" in out

    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 13 * 3600)
    code, out = _run(suite, store, capsys)
    assert code == 1, "an expired quarantine blocks again"
    assert "quarantined" not in out


@pytest.mark.slow
def test_a_removed_quarantine_blocks_again_and_stays_in_the_log(suite, tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert _run(suite, store, capsys)[0] == 1
    suite_id = stored_suite_id(store)
    assert (
        main(
            [
                "triage",
                "add",
                "quarantine",
                "--suite",
                suite_id,
                "--case",
                "case-1",
                "--until",
                "2d",
                "--reason",
                "flaky",
                "--by",
                "alice",
                "--store",
                store,
            ]
        )
        == 0
    )
    assert _run(suite, store, capsys)[0] == 0
    assert (
        main(["triage", "remove", "1", "--reason", "fixed", "--by", "bob", "--store", store]) == 0
    )
    capsys.readouterr()
    assert _run(suite, store, capsys)[0] == 1
    assert main(["triage", "list", "--suite", suite_id, "--store", store]) == 0
    assert "quarantine" not in capsys.readouterr().out
    assert main(["triage", "list", "--all", "--store", store]) == 0
    log = " ".join(capsys.readouterr().out.split())
    assert "remove #1" in log and "bob" in log and "alice" in log


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["quarantine", "--case", "0", "--reason", "r"], "needs a case and an expiry"),
        (
            ["quarantine", "--case", "0", "--until", "2001-01-01", "--reason", "r"],
            "not in the future",
        ),
        (
            ["quarantine", "--case", "0", "--until", "soon", "--reason", "r"],
            "cannot read the expiry",
        ),
        (
            ["quarantine", "--case", "0", "--until", "100000d", "--reason", "r"],
            "a quarantine lasts at most 90 days",
        ),
        (["acknowledge", "--reason", "r"], "names what it acknowledges"),
        (
            [
                "acknowledge",
                "--gate",
                "regression",
                "--reason",
                "r",
                "--link",
                "javascript:alert(1)",
            ],
            "is not an http(s) URL",
        ),
        (["accept-disagreement", "--reason", "r"], "names its case"),
        (["acknowledge", "--gate", "regression", "--reason", "  "], "needs a reason"),
    ],
)
def test_bad_triage_input_exits_2_naming_the_fix(arguments, message, tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert main(["triage", "add", *arguments, "--suite", "s", "--store", store]) == 2
    err = capsys.readouterr().err
    assert message in err and "fix:" in err


def test_removing_an_unknown_action_exits_2(tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert main(["triage", "remove", "7", "--reason", "x", "--store", store]) == 2
    assert "no triage action 7" in capsys.readouterr().err


def test_a_mistyped_case_is_refused(suite, tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    _run(suite, store, capsys)
    suite_id = stored_suite_id(store)
    arguments = ["--suite", suite_id, "--case", "case-9", "--until", "1d", "--reason", "r"]
    assert main(["triage", "add", "quarantine", *arguments, "--store", store]) == 2
    err = capsys.readouterr().err
    assert "has no case 'case-9'" in err and "case-1, case-2" in err
