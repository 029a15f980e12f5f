"""Streamlit building blocks shared by the pages: headers, badges, styled and exportable
tables, and HTML blocks built only from escaped text."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from evals.common import spreadsheet
from evals.dashboard import theme


def header(title: str, subtitle: str) -> None:
    """A page's title and one line saying what it answers."""
    st.title(title)
    st.caption(subtitle)


def badge(text: str, word: str | None = None) -> None:
    """A coloured badge; its colour is that of `word` (default: the text itself)."""
    st.badge(text, color=theme.badge_tone(word or text))  # type: ignore[arg-type]


def tinted_column(frame: pd.DataFrame, column: str, label: str | None = None) -> Any:
    """The column config that draws each verdict/status word of `column` as a label in the
    dashboard's colour (red worse, green better, grey undecided).

    Streamlit colours the labels in the browser from this small config, so a table of any
    length costs nothing more to send than its plain values (a pandas Styler would send
    every cell's style)."""
    words = sorted({w for w in frame[column].dropna().unique() if isinstance(w, str) and w})
    return st.column_config.MultiselectColumn(
        label, options=words, color=[theme.hex_colour(w) for w in words] or None
    )


def no_data(message: str) -> None:
    """Say that a panel has nothing to show, and why."""
    st.info(message, icon="ℹ️")


def csv_text(frame: pd.DataFrame) -> str:
    """A table as CSV that a spreadsheet opens as text, written by evals' one CSV writer
    (`evals.common.spreadsheet`): a header or cell that would run as a formula (`=`, `+`,
    `-`, `@` first, after any blank, or a leading tab) is prefixed with `'`; numbers stay
    numbers, missing values are empty."""
    cleaned = frame.astype(object).where(frame.notna(), None)
    return spreadsheet.csv_text(list(cleaned.columns), cleaned.itertuples(index=False))


def export(
    frame: pd.DataFrame | Callable[[], pd.DataFrame],
    name: str,
    key: str,
    what: str = "",
) -> None:
    """CSV and JSON downloads of a table, written only when clicked. `frame` may be a
    function that reads the whole table then (every matching row, not the page shown);
    `what` names the rows in the buttons' labels (`all 3,032 matching runs`)."""

    def rows() -> pd.DataFrame:
        return frame() if callable(frame) else frame

    left, right, _ = st.columns([1, 1, 4])
    suffix = f" of {what}" if what else ""
    left.download_button(
        f"CSV{suffix}",
        data=lambda: csv_text(rows()),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    right.download_button(
        f"JSON{suffix}",
        data=lambda: rows().to_json(orient="records", date_format="iso", indent=1),
        file_name=f"{name}.json",
        mime="application/json",
        key=f"{key}_json",
        on_click="ignore",
        icon=":material/download:",
    )


def on_demand(label: str, key: str, draw: Callable[[], None]) -> None:
    """A switch that draws `draw` (a full table and its downloads) only once it is turned
    on, rerunning only this part of the page.

    A table in a folded expander is still sent to the browser, which first loads the
    table grid's code (1.2 MB of script to fetch and compile); a page whose first view
    needs no grid opens that much sooner."""

    @st.fragment
    def part() -> None:
        if st.toggle(label, key=key):
            draw()

    part()


def _cell(value: Any, tinted: bool) -> str:
    text = "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)
    short = ' class="short"' if len(text) <= SHORT_CELL else ""
    if tinted and text:
        return (
            f'<td{short}><span class="tag" style="background:{theme.hex_colour(text)}">'
            f"{html.escape(text)}</span></td>"
        )
    return f"<td{short}>{html.escape(text)}</td>"


# Cells this short (names, statuses, numbers) never wrap, so long ones (reasons) take the width.
SHORT_CELL = 24


TABLE_STYLE = (
    "<style>.evals-table{border-collapse:collapse;width:100%;font-size:0.9rem}"
    ".evals-table th,.evals-table td{border-bottom:1px solid #e3e5e8;padding:6px 8px;"
    "text-align:left;vertical-align:top;white-space:pre-wrap;overflow-wrap:anywhere}"
    ".evals-table th{font-weight:600;color:#555;white-space:nowrap}"
    ".evals-table td.short{white-space:nowrap}"
    ".evals-table .tag{color:white;border-radius:4px;padding:1px 6px;font-weight:600}</style>"
)


def table_html(frame: pd.DataFrame, tinted: list[str] | None = None) -> str:
    """The HTML of `text_table`, to draw within a larger block."""
    tinted_set = set(tinted or [])
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(_cell(v, c in tinted_set) for c, v in row.items()) + "</tr>"
        for _, row in frame.iterrows()
    )
    return f'{TABLE_STYLE}<table class="evals-table"><tr>{head}</tr>{body}</table>'


def text_table(frame: pd.DataFrame, tinted: list[str] | None = None) -> None:
    """A table whose cells wrap, so long texts (gate reasons) show in full. Every cell is
    escaped: nothing in it is read as HTML."""
    st.html(table_html(frame, tinted))


TILE_STYLE = (
    "<style>.evals-tiles{display:flex;gap:1rem;flex-wrap:wrap}"
    ".evals-tile{flex:1 1 0;min-width:8rem}"
    ".evals-tile .label{font-size:0.875rem;color:#555}"
    ".evals-tile .value{font-size:2.25rem;line-height:1.3}</style>"
)


def heading_html(title: str, note: str = "") -> str:
    """A section's heading and a line under it (each left out when empty), as HTML to draw
    within a larger block, at the size of the page's other section headings."""
    head = (
        '<h3 style="font-size:1.5rem;font-weight:600;margin:1rem 0 0.5rem 0">'
        f"{html.escape(title)}</h3>"
        if title
        else ""
    )
    line = (
        f'<p style="color:#555;font-size:0.875rem;margin:0 0 0.5rem 0">{html.escape(note)}</p>'
        if note
        else ""
    )
    return head + line


def tiles_html(items: list[tuple[str, Any, str]]) -> str:
    """The HTML of `tiles`, to draw within a larger block."""
    cells = "".join(
        f'<div class="evals-tile" title="{html.escape(help_text)}">'
        f'<div class="label">{html.escape(label)}</div>'
        f'<div class="value">{html.escape(str(value))}</div></div>'
        for label, value, help_text in items
    )
    return f'{TILE_STYLE}<div class="evals-tiles">{cells}</div>'


def badge_html(text: str, word: str | None = None) -> str:
    """`badge` as HTML, to draw within a larger block: the text on a tint of the colour of
    `word` (default: the text itself)."""
    colour = theme.hex_colour(word or text)
    return (
        f'<span style="background:{colour}22;color:{colour};border-radius:0.5rem;'
        f'padding:0.125rem 0.5rem;font-size:0.875rem;font-weight:600">'
        f"{html.escape(text)}</span>"
    )


def badges_html(items: list[tuple[str, str | None]]) -> str:
    """A row of badges, each (text, the word whose colour it takes: None for the text
    itself), as HTML to draw within a larger block: one `st.badge` is a Markdown element of
    its own."""
    cells = "".join(badge_html(text, word) for text, word in items)
    return f'<div style="display:flex;gap:0.5rem;flex-wrap:wrap;margin:0.25rem 0">{cells}</div>'
