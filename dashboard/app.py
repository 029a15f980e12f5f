"""Entry point of the dashboard: `evals dashboard` runs `streamlit run dashboard/app.py`.

Sets up the page, the suite and environment pickers shared by every page and the
navigation between What changed (the landing page), Overview, Compare, Case, Runs and
Cost and latency. Read-only over the store named by $EVALS_STORE_URL. Each page is a
script under views/; access control would wrap `navigation.run()` here, and page
actions (acknowledging a regression, say) belong to the page that shows the thing.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy.engine import make_url

from evals.dashboard import auth, data, selection, theme

st.set_page_config(page_title="evals · regressions", page_icon=theme.FAVICON, layout="wide")
person = auth.visitor()

PAGES = [
    st.Page(
        "views/changes.py",
        title="What changed",
        icon=":material/notifications:",
        url_path="changes",
        default=True,
    ),
    st.Page("views/overview.py", title="Overview", icon=":material/monitoring:"),
    st.Page(
        "views/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"
    ),
    st.Page("views/case.py", title="Case", icon=":material/search:", url_path="case"),
    st.Page("views/outputs.py", title="Outputs", icon=":material/view_column:", url_path="outputs"),
    st.Page("views/runs.py", title="Runs", icon=":material/manage_search:", url_path="runs"),
    st.Page("views/cost_latency.py", title="Cost and latency", icon=":material/timer:"),
    *auth.pages(person),
]

navigation = st.navigation(PAGES)
# The sidebar's heading and its legend are one block each: every element costs the
# browser several components to draw, on every page.
st.sidebar.html(
    "<h1 style='font-size:1.75rem;margin:0;padding:0'>evals</h1>"
    "<p style='color:#666;font-size:0.875rem;margin:0'>Agent regression dashboard</p>"
)
auth.sidebar(person)
suite_id = selection.pick_suite()
if suite_id is not None:
    selection.pick_environment(suite_id)
st.sidebar.caption(
    ":red-badge[regression] :green-badge[improvement] :gray-badge[inconclusive] "
    ":yellow-badge[insufficient data] :blue-badge[equivalent]  \n"
    "Store: " + make_url(data.store_url()).render_as_string(hide_password=True),
    help="Red is worse, green better, grey undecided, ochre too few runs to test, blue "
    "equivalent, on every page and chart. "
    "Set EVALS_STORE_URL or pass --store to `evals dashboard` to read another store.",
)
if suite_id is not None:
    navigation.run()
