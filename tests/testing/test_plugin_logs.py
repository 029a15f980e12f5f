"""`pytest --evals` in a CI log (its output piped, not a terminal): the harness's summary
keeps every column and whole case names, and ends the output with its last block."""

from __future__ import annotations

import pytest

from tests.testing.project import suite, write_project

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow

TESTS = """
import pytest
from evals.testing import check

TITLES = ["nave", "lumi", "vera", "busi"]

@pytest.mark.evals(priority="P0")
@pytest.mark.parametrize("title", TITLES)
def test_instruccion_inyectada_en_un_titular(evals_agent, title):
    check(evals_agent(title), "contains", f"echo {title}")
"""


def test_a_piped_session_keeps_the_verdict_column_and_ends_with_the_last_block(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    gates = "baseline: a0\n  candidate: a1\n  min_pass_rate: 0.9"
    write_project(pytester, tests=TESTS, suite_text=suite(gates=gates, rates=(1.0, 0.0)))

    result = pytester.runpytest_subprocess(
        "--evals", "--evals-store", "results.db", "-p", "no:cacheprovider"
    )

    assert result.ret == 1
    lines = result.stdout.lines
    header = next(line for line in lines if line.lstrip().startswith("Case "))
    assert header.split()[-1] == "Verdict"
    names = [
        f"test_instruccion_inyectada_en_un_titular[{t}]" for t in ("nave", "lumi", "vera", "busi")
    ]
    rows = [line for line in lines if line.startswith(" ") and "/3" in line]
    assert len(rows) == 4
    assert all(any(name in row for row in rows) for name in names)
    assert all(row.split()[-1] in ("regression", "inconclusive") for row in rows)
    # The block is the last of the summary, before pytest's own closing line.
    end = lines[lines.index("❌ Gate verdict: FAIL") : -1]
    assert lines[-1].startswith("=") and "failed" in lines[-1]
    assert any(line.startswith("  ❌ min_pass_rate fail: a1 pass rate 0.000") for line in end)
    assert end[-3].startswith("evaluation ") and end[-3].endswith(" in results.db")
    evaluation = end[-3].split()[1]
    assert end[-2].startswith(f"next: evals compare {evaluation} --store results.db")
