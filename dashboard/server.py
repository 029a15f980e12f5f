"""The dashboard's server process: Streamlit with the pages' heavy modules loaded first.

`evals dashboard` runs `python -m evals.dashboard.server run app.py ...`. Before handing
its arguments to Streamlit's own command line, this imports what every page script
needs (pandas, Altair, the dashboard's modules and the store), renders one tiny chart
so Altair has loaded its Vega-Lite schema, and loads Streamlit's emoji catalogue (half a
second: the pages' notices carry an emoji icon). Those costs are paid while the server
starts, not by the first visitor's page.
"""

from __future__ import annotations


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


def main() -> None:
    """Warm up, then run Streamlit's command line on this process's arguments."""
    warm_up()
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
