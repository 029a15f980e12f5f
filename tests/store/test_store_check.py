"""`evals store check`: a whole store passes, a damaged or missing one does not, and the
check changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from records import make_meta, make_records

from evals.cli import main
from evals.store import open_store
from evals.store.integrity import check_store


def _store(path: Path) -> Path:
    store = open_store(str(path))
    try:
        store.create_evaluation(make_meta("e1"))
        store.add_runs("e1", make_records(4, 3))
    finally:
        store.close()
    return path


def test_a_whole_store_passes_and_is_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _store(tmp_path / "results.db")
    before = path.read_bytes()

    assert main(["store", "check", "--store", str(path)]) == 0

    assert capsys.readouterr().out.startswith(f"ok: {path}: 1 evaluation(s), schema version ")
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", ["truncated", "zeroed", "text", "empty", "missing"])
def test_a_damaged_or_missing_store_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path = _store(tmp_path / "results.db")
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "zeroed":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes(4096) + data[middle + 4096 :])
    elif damage == "text":
        path.write_text("not a database at all\n" * 100)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.unlink()

    assert main(["store", "check", "--store", str(path)]) == 1

    assert capsys.readouterr().out.startswith("unusable: ")
    assert not check_store(str(path)).ok
