"""Entry point of the dashboard: `evals dashboard` runs `streamlit run dashboard/app.py`.

Sets up the page, the suite picker shared by every page and the navigation between the
Overview, Compare, Case and Cost and latency pages. Read-only over the store named by
$EVALS_STORE_URL.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy.engine import make_url

from dashboard import data, selection

st.set_page_config(page_title="evals · regressions", page_icon="🧪", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon="📈", url_path="overview", default=True),
    st.Page("pages/compare.py", title="Compare", icon="⚖️", url_path="compare"),
    st.Page("pages/case.py", title="Case", icon="🔎", url_path="case"),
    st.Page("pages/cost_latency.py", title="Cost and latency", icon="⏱️", url_path="cost"),
]

navigation = st.navigation(PAGES)
st.sidebar.title("evals")
st.sidebar.caption("Agent regression dashboard")
suite_id = selection.pick_suite()
st.sidebar.caption(
    "Store: " + make_url(data.store_url()).render_as_string(hide_password=True),
    help="Set EVALS_STORE_URL or pass --store to `evals dashboard` to read another store.",
)
st.sidebar.caption("🔴 regression · 🟢 improvement · ⚪ inconclusive")
if suite_id is not None:
    navigation.run()
