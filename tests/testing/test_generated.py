"""Cases drawn with hypothesis: recorded once, read back unchanged, grown on purpose."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import strategies as st

from evals.model.errors import SuiteError
from evals.testing import cases_from, generated

RANGES = st.fixed_dictionaries(
    {"ticker": st.sampled_from(["BUSI", "TORC", "LUMI"]), "days": st.integers(1, 90)}
)


@pytest.fixture(autouse=True)
def fresh_session():
    generated.configure(regenerate=False)
    yield
    generated.configure(regenerate=False)


def test_cases_are_drawn_once_then_read_back_from_the_database(tmp_path, monkeypatch):
    database = tmp_path / "ranges.cases.json"

    drawn = cases_from(RANGES, n=8, database=database)
    monkeypatch.setattr(generated, "_draw", lambda *args: pytest.fail("drew again"))
    again = cases_from(RANGES, n=8, database=database)

    assert again == drawn
    assert len({json.dumps(c, sort_keys=True) for c in drawn}) == 8
    assert json.loads(database.read_text(encoding="utf-8"))["examples"] == drawn
    assert generated.recorded_files() == [database, database]


@pytest.mark.slow
def test_a_fresh_draw_gives_the_same_cases_in_another_process(tmp_path):
    mine = cases_from(RANGES, n=6, database=tmp_path / "mine.json")
    code = textwrap.dedent(f"""
        import json
        from hypothesis import strategies as st
        from evals.testing import cases_from
        ranges = st.fixed_dictionaries(
            {{"ticker": st.sampled_from(["BUSI", "TORC", "LUMI"]), "days": st.integers(1, 90)}}
        )
        print(json.dumps(cases_from(ranges, n=6, database={str(tmp_path / "theirs.json")!r})))
    """)

    answer = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )

    assert json.loads(answer.stdout) == mine


def test_regenerating_grows_the_set_and_keeps_what_was_recorded(tmp_path):
    database = tmp_path / "ranges.cases.json"
    first = cases_from(RANGES, n=5, database=database)

    with pytest.raises(SuiteError, match="asks for 9 cases and the database records 5") as error:
        cases_from(RANGES, n=9, database=database)
    generated.configure(regenerate=True)
    grown = cases_from(RANGES, n=9, database=database)

    assert "--evals-regenerate-cases" in error.value.render()
    assert grown[:5] == first
    assert len({json.dumps(c, sort_keys=True) for c in grown}) == 9
    assert cases_from(RANGES, n=3, database=database) == first[:3]


def test_examples_come_back_as_json_reads_them(tmp_path):
    pairs = st.tuples(st.integers(0, 50), st.integers(0, 50))

    drawn = cases_from(pairs, n=4, database=tmp_path / "pairs.json")

    assert all(isinstance(pair, list) and len(pair) == 2 for pair in drawn)
    assert cases_from(pairs, n=4, database=tmp_path / "pairs.json") == drawn


def test_values_json_cannot_hold_and_a_too_narrow_strategy_are_refused(tmp_path):
    with pytest.raises(SuiteError, match="is not a JSON value") as error:
        cases_from(st.dates(), n=2, database=tmp_path / "dates.json")
    with pytest.raises(SuiteError, match="gave 2 distinct examples"):
        cases_from(st.sampled_from(["a", "b"]), n=3, database=tmp_path / "ab.json")
    with pytest.raises(ValueError, match="n must be a positive integer"):
        cases_from(RANGES, n=0, database=tmp_path / "none.json")

    assert "st.dates().map(str)" in error.value.render()
    assert not (tmp_path / "dates.json").exists()


def test_the_default_database_sits_beside_the_calling_module(tmp_path):
    module = tmp_path / "test_mod.py"
    module.write_text(
        "from hypothesis import strategies as st\n"
        "from evals.testing import cases_from\n"
        "CASES = cases_from(st.integers(0, 99), n=3)\n",
        encoding="utf-8",
    )

    namespace: dict = {}
    exec(compile(module.read_text(encoding="utf-8"), str(module), "exec"), namespace)

    recorded = json.loads((tmp_path / "test_mod.cases.json").read_text(encoding="utf-8"))
    assert recorded["examples"] == namespace["CASES"]
    assert Path(generated.recorded_files()[0]) == tmp_path / "test_mod.cases.json"
