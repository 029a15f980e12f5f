"""Time every dashboard page in a real browser on a large store, cold and warm.

    python -m benchmarks.dashboard_pages --chromium /usr/bin/chromium \
        --store sqlite:///.evals/pages.db --evaluations 40 --cases 250 --repeats 5

Fills the store once (evaluations x cases x 2 agents x repeats synthetic runs, see
`benchmarks/dashboard_scale.py`; the defaults make 100,000 runs, `--evaluations 100
--cases 500 --repeats 10` makes 1,000,000), then for each page starts `evals dashboard`
afresh, opens the page in headless Chromium (cold: first visit after the server starts)
and opens it again in a new tab (warm: the server's caches filled). A page's time runs
from navigation until the server reports that the page's script finished (Streamlit's
`script_finished` message on the page's websocket) and every element is drawn, so it
includes every query and the rendering on the server, and the browser's loading of the
app. Prints one line per page and the ratio of each time to the targets (2 s warm, 3 s
cold). `--pages changes,compare` times only those pages.

The first line is the floor: an empty Streamlit page (`st.write("x")`) served and timed
the same way. No page can be faster than it on the machine; what a page adds is its time
less the floor.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.dashboard_scale import AGENTS, fill
from evals.store import open_store
from evals.store.dashboard_queries import DashboardQueries
from tests.dashboard.browser import CHROMIUM_ARGS, ScriptRuns, serve, serve_script

# URL path of each page; What changed is the landing page, at the root.
PAGES = {
    "changes": "",
    "overview": "overview",
    "compare": "compare",
    "case": "case",
    "runs": "runs",
    "cost_latency": "cost_latency",
}
FLOOR = "empty page"
WARM_TARGET_S = 2.0
COLD_TARGET_S = 3.0


def visit(browser: Any, address: str) -> float:
    """Seconds from opening `address` in a new tab until its script finished."""
    page = browser.new_page(viewport={"width": 1440, "height": 1800})
    seconds = ScriptRuns(page).after(lambda: page.goto(address))
    page.close()
    return seconds


def main() -> None:
    """Fill the store if it is empty, then time each page cold and warm."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", default="sqlite:///.evals/dashboard-pages.db")
    parser.add_argument("--chromium", required=True, help="a Chromium binary")
    parser.add_argument("--evaluations", type=int, default=40)
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--pages",
        default=",".join(PAGES),
        help=f"comma-separated pages to time (default: all of {', '.join(PAGES)})",
    )
    args = parser.parse_args()
    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    unknown = sorted(set(pages) - set(PAGES))
    if unknown:
        parser.error(f"unknown page(s) {', '.join(unknown)}: choose among {', '.join(PAGES)}")
    store = open_store(args.store)
    if not DashboardQueries(store.engine).suites():
        total = args.evaluations * args.cases * len(AGENTS) * args.repeats
        print(f"filling {args.store} with {total:,} runs", flush=True)
        began = time.perf_counter()
        fill(store, args.evaluations, args.cases, args.repeats)
        print(f"filled in {time.perf_counter() - began:.0f} s", flush=True)
    with store.engine.connect() as connection:
        runs = connection.exec_driver_sql("SELECT count(*) FROM runs").scalar_one()
    store.close()
    print(f"{runs:,} runs in the store")

    from playwright.sync_api import sync_playwright

    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"{'page':<16} {'cold s':>8} {'/3 s':>6} {'warm s':>8} {'/2 s':>6}")
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        empty = Path(folder) / "empty.py"
        empty.write_text('import streamlit as st\n\nst.write("x")\n')
        with serve_script(str(empty)) as address:
            report(FLOOR, visit(browser, address), visit(browser, address))
        for name in pages:
            with serve(args.store) as address:
                cold = visit(browser, f"{address}/{PAGES[name]}")
                warm = visit(browser, f"{address}/{PAGES[name]}")
            report(name, cold, warm)
        browser.close()
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


def report(name: str, cold: float, warm: float) -> None:
    """One line: a page's cold and warm seconds and their ratios to the targets."""
    print(
        f"{name:<16} {cold:8.2f} {cold / COLD_TARGET_S:6.2f} "
        f"{warm:8.2f} {warm / WARM_TARGET_S:6.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
