"""Percentage-change cases drawn with hypothesis from the demo market: a ticker and a date
range, recorded in generated_cases.json so every run evaluates the same cases.

`pytest --evals test_generated_cases.py` evaluates them like any marked test; `pytest
--evals-regenerate-cases` grows the recorded set when N below is raised (commit the file:
the evaluation's fingerprint covers it). The expected change comes from the market's
closes, so a case needs no hand-written answer.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import strategies as st
from trading_tools import precio
from trading_world import COMPANIES, FIRST_DAY, LAST_DAY

from evals.testing import assert_verified, cases_from

N = 12
LONGEST = 120  # days between the two dates at most
PERCENT = re.compile(r"(-?\d+(?:\.\d+)?) %")


def _range(ticker: str, start: dt.date, days: int) -> dict[str, str]:
    return {"ticker": ticker, "desde": str(start), "hasta": str(start + dt.timedelta(days))}


RANGES = st.builds(
    _range,
    st.sampled_from(sorted(COMPANIES)),
    st.dates(FIRST_DAY, LAST_DAY - dt.timedelta(LONGEST)),
    st.integers(7, LONGEST),
)
CASES = cases_from(RANGES, n=N, database="generated_cases.json")


@pytest.mark.evals(tags=["variacion", "generated"], priority="P2")
@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['ticker']}-{c['desde']}-{c['hasta']}" for c in CASES]
)
def test_generated_percentage_change(evals_agent, case):
    ticker, start, end = case["ticker"], case["desde"], case["hasta"]
    first, last = precio(ticker, start)["cierre"], precio(ticker, end)["cierre"]
    exact = 100 * (last / first - 1)

    result = evals_agent(
        f"¿Cuánto cambió en porcentaje el cierre de {ticker} entre el {start} y el {end}?"
    )

    stated = PERCENT.search(result.text)
    assert stated is not None, f"no percentage in {result.text!r}"
    assert abs(float(stated.group(1)) - exact) < 0.006, f"{stated.group(0)} for {exact:.4f} %"
    assert_verified(result)
