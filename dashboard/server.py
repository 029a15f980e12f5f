"""The dashboard's server process: Streamlit with the pages' heavy modules loaded and the
default views' data read first.

`evals dashboard` runs `python -m evals.dashboard.server run app.py ...`. Before handing
its arguments to Streamlit's own command line, this imports what every page script
needs (pandas, Altair, the dashboard's modules and the store), renders one tiny chart
so Altair has loaded its Vega-Lite schema, and loads Streamlit's emoji catalogue (half a
second: the pages' notices carry an emoji icon). Then it runs each page once, headless,
as a first visitor would open it: its queries, comparisons and charts land in the
`st.cache_data` and `st.cache_resource` caches, which every session of the server
shares, so the first visitor's page reads nothing from the store. Those costs are paid
while the server starts, not by the first visitor.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Every page a visitor may open without logging in, as `app.py` names them; What changed,
# the landing page, runs first.
VIEWS = (
    "views/overview.py",
    "views/compare.py",
    "views/case.py",
    "views/runs.py",
    "views/cost_latency.py",
)
# Seconds one page may take to read and draw its default view while the server starts;
# past it (a store that does not answer) the server stops filling and starts serving.
PREFILL_TIMEOUT_S = 60.0


def warm_up() -> None:
    """Import the pages' modules and let Altair load its schema once."""
    import altair as alt
    import pandas as pd
    import streamlit.emojis  # noqa: F401

    import evals.dashboard.changes
    import evals.dashboard.charts
    import evals.dashboard.data
    import evals.dashboard.frames
    import evals.dashboard.selection
    import evals.dashboard.widgets  # noqa: F401

    alt.Chart(pd.DataFrame({"x": [0.0]})).mark_point().encode(x="x:Q").to_dict()


def prefill(app: Path) -> list[str]:
    """Run the landing page and every page of `VIEWS` once in Streamlit's headless
    `AppTest`, filling the caches every session shares; returns the pages that raised.

    A page that fails here is left for its visitor to see the error; the server still
    starts. A page that takes longer than `PREFILL_TIMEOUT_S` ends the filling."""
    from streamlit.runtime import Runtime
    from streamlit.testing.v1 import AppTest

    test = AppTest.from_file(str(app), default_timeout=PREFILL_TIMEOUT_S)
    failed: list[str] = []
    for view in (None, *VIEWS):
        if view is not None:
            test.switch_page(view)
        try:
            test.run()
        except RuntimeError:
            # A run that timed out leaves AppTest's stand-in runtime installed, which
            # would keep Streamlit's own from starting.
            Runtime._instance = None
            return [*failed, view or "landing page"]
        if test.exception:
            failed.append(view or "landing page")
    return failed


def main() -> None:
    """Warm up, fill the default views' caches, then run Streamlit's command line on this
    process's arguments (`run app.py ...`)."""
    warm_up()
    if len(sys.argv) > 2 and sys.argv[1] == "run":
        for page in prefill(Path(sys.argv[2])):
            print(f"evals dashboard: {page} failed while the server started", file=sys.stderr)
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
