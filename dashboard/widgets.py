"""Streamlit building blocks shared by the pages: headers, badges, styled tables."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evals.dashboard import theme


def header(title: str, subtitle: str) -> None:
    """A page's title and one line saying what it answers."""
    st.title(title)
    st.caption(subtitle)


def badge(text: str, word: str | None = None) -> None:
    """A coloured badge; its colour is that of `word` (default: the text itself)."""
    st.badge(text, color=theme.tone(word or text))  # type: ignore[arg-type]


def colour_words(frame: pd.DataFrame, columns: list[str]) -> pd.io.formats.style.Styler:
    """A table whose verdict/status columns are tinted with the dashboard's colours."""

    def tint(word: object) -> str:
        if not isinstance(word, str) or not word:
            return ""
        return f"color: white; background-color: {theme.hex_colour(word)}; font-weight: 600"

    return frame.style.map(tint, subset=[c for c in columns if c in frame.columns])


def no_data(message: str) -> None:
    """Say that a panel has nothing to show, and why."""
    st.info(message, icon="ℹ️")
