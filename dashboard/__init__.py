"""The Streamlit dashboard: a read-only browser over the results store."""
