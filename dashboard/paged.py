"""Long tables as plain HTML, one page of rows at a time; page and sort in the address.

The table grid (`st.dataframe`) makes a fresh browser fetch and compile about 1.2 MB of
script before it draws a row, and a 500-case table sends every row. A page of 50 rows as
HTML is drawn with the page's text: its cells wrap (full reasons), its links are real
links, and `?page=` and `?sort=` keep the view in the address. The grid itself stays
available on demand (`evals.dashboard.widgets.on_demand`).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from evals.dashboard import selection, theme, widgets

PER_PAGE = 50
PAGE = "page"
SORT = "sort"


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a paged table: its field, header, how a value is written, whether it
    is tinted as a verdict or status, and (for links) the address a row's cell opens."""

    field: str
    label: str
    text: Callable[[Any], str] = str
    tinted: bool = False
    href: Callable[[dict[Any, Any]], str] | None = None


@dataclass(frozen=True, slots=True)
class Sort:
    """An order a reader can pick: its label and the (field, ascending) keys, applied after
    `first` (the table's own leading order, e.g. regressions first)."""

    label: str
    keys: tuple[tuple[str, bool], ...]


def page_count(rows: int, per_page: int = PER_PAGE) -> int:
    """How many pages `rows` rows fill (one when there are none)."""
    return max(1, -(-rows // per_page))


def clamp_page(wanted: str | None, rows: int, per_page: int = PER_PAGE) -> int:
    """The page to show for an address's `?page=` value: 1 when missing or unreadable,
    else kept within the pages there are."""
    try:
        page = int(wanted or 1)
    except ValueError:
        page = 1
    return min(max(page, 1), page_count(rows, per_page))


def sort_rows(frame: pd.DataFrame, sort: Sort, first: str | None = None) -> pd.DataFrame:
    """`frame` in `sort`'s order, stably (ties keep their order); `first` names a numeric
    rank column that leads every order. Missing values go last."""
    keys = [(first, True)] if first else []
    keys += list(sort.keys)
    if not keys:
        return frame
    return frame.sort_values(
        [k for k, _ in keys], ascending=[a for _, a in keys], kind="stable", na_position="last"
    )


def cell_text(value: Any, text: Callable[[Any], str]) -> str:
    """A cell's text: empty for a missing value, else `text(value)`."""
    if value is None or (not isinstance(value, list | tuple) and pd.isna(value)):
        return ""
    return text(value)


def _cell(column: Column, row: dict[Any, Any]) -> str:
    text = cell_text(row[column.field], column.text)
    escaped = html.escape(text)
    short = ' class="short"' if len(text) <= widgets.SHORT_CELL else ""
    if column.href is not None and text:
        address = html.escape(column.href(row))
        return f'<td{short}><a href="{address}" target="_self">{escaped}</a></td>'
    if column.tinted and text:
        return (
            f'<td{short}><span class="tag" style="background:{theme.hex_colour(text)}">'
            f"{escaped}</span></td>"
        )
    return f"<td{short}>{escaped}</td>"


def table_html(frame: pd.DataFrame, columns: Sequence[Column], caption: str) -> str:
    """An HTML table of `frame`'s rows in `columns`, with a caption and column headers;
    every text is escaped, so nothing in a cell is read as HTML."""
    head = "".join(f'<th scope="col">{html.escape(c.label)}</th>' for c in columns)
    body = "".join(
        "<tr>" + "".join(_cell(c, row) for c in columns) + "</tr>"
        for row in frame.to_dict("records")
    )
    return (
        f'{widgets.TABLE_STYLE}<table class="evals-table paged-table">'
        f'<caption style="caption-side:top;text-align:left;color:#555">{html.escape(caption)}'
        f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def draw(
    frame: pd.DataFrame,
    columns: Sequence[Column],
    *,
    noun: str,
    key: str,
    sorts: Sequence[Sort],
    first: str | None = None,
    per_page: int = PER_PAGE,
) -> pd.DataFrame:
    """Draw one page of `frame` as an HTML table, with a sort picker and a page number kept
    in the address (`?sort=`, `?page=`); returns the rows shown.

    `first` names a rank column that leads every order (regressions first)."""
    labels = [s.label for s in sorts]
    wanted = st.query_params.get(SORT, labels[0])
    picker, pager, _ = st.columns([2, 1, 3])
    label = picker.selectbox(
        "Sort by",
        labels,
        index=labels.index(wanted) if wanted in labels else 0,
        key=f"{key}_sort",
    )
    selection.keep_param(SORT, None if label == labels[0] else label)
    pages = page_count(len(frame), per_page)
    page = clamp_page(st.query_params.get(PAGE), len(frame), per_page)
    if pages > 1:
        page = int(pager.number_input("Page", 1, pages, page, key=f"{key}_page"))
    selection.keep_param(PAGE, None if page == 1 else str(page))
    ordered = sort_rows(frame, sorts[labels.index(label)], first)
    shown = ordered.iloc[(page - 1) * per_page : page * per_page]
    start = (page - 1) * per_page + 1
    caption = (
        f"{noun} {start:,}–{start + len(shown) - 1:,} of {len(frame):,} · page {page} of "
        f"{pages} · sorted by {label}"
        if len(frame)
        else f"no {noun} match these filters"
    )
    st.html(table_html(shown, columns, caption))
    return shown
