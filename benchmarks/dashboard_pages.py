"""Time every dashboard page in a real browser on a large store, cold and warm.

    python -m benchmarks.dashboard_pages --chromium /usr/bin/chromium \
        --store sqlite:///.evals/pages.db --evaluations 40 --cases 250 --repeats 5

Fills the store once (evaluations x cases x 2 agents x repeats synthetic runs, see
`benchmarks/dashboard_scale.py`; the defaults make 100,000 runs, `--evaluations 100
--cases 500 --repeats 10` makes 1,000,000), then for each page starts `evals dashboard`
afresh, opens the page in headless Chromium (cold: first visit after the server starts),
again in another fresh browser profile (warm: the server's caches filled) and once more
in a second tab of that profile (tab: the browser's cache filled too). A page's time runs
from navigation until the server reports that the page's script finished (Streamlit's
`script_finished` message on the page's websocket) and every element is drawn, so it
includes every query and the rendering on the server, and the browser's loading of the
app. Prints one line per page (medians over `--rounds`) and the ratio of the cold and
warm times to the targets (3 s cold, 2 s warm). `--pages changes,compare` times only
those pages.

The first line is the floor: an empty Streamlit page (`st.write("x")`) served and timed
the same way. No page can be faster than it on the machine; what a page adds is its time
less the floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
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
VIEWPORT = {"width": 1440, "height": 1800}
WARM_TARGET_S = 2.0
COLD_TARGET_S = 3.0


def visit(context: Any, address: str) -> float:
    """Seconds from opening `address` in a new tab of the browser `context` until its
    script finished and the page is drawn, by the page's own clock (from the start of
    its navigation; the harness's polls and messages to the browser are not counted).
    The wait starts once the server answers the address, not at the page's `load`."""
    page = context.new_page()
    runs = ScriptRuns(page)
    runs.after(lambda: page.goto(address, wait_until="commit"))
    page.close()
    return runs.drawn_on_page_clock


def times(browser: Any, address: str) -> tuple[float, float, float]:
    """(cold, warm, tab) seconds of one page on a server that has served nothing yet.

    Cold and warm each open the page in a fresh browser profile, which has to fetch and
    compile Streamlit's scripts; tab opens it once more beside the warm visit, in the same
    profile, as a user's second tab does (scripts come from the browser's cache)."""
    cold_profile = browser.new_context(viewport=VIEWPORT)
    cold = visit(cold_profile, address)
    cold_profile.close()
    profile = browser.new_context(viewport=VIEWPORT)
    warm = visit(profile, address)
    tab = visit(profile, address)
    profile.close()
    return cold, warm, tab


def main() -> None:
    """Fill the store if it is empty, then time each page cold and warm."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", default="sqlite:///.evals/dashboard-pages.db")
    parser.add_argument("--chromium", required=True, help="a Chromium binary")
    parser.add_argument("--evaluations", type=int, default=40)
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--rounds", type=int, default=1, help="time each page this many times; print medians"
    )
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
    print(f"{'page':<16} {'cold s':>8} {'/3 s':>6} {'warm s':>8} {'/2 s':>6} {'tab s':>8}")
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        empty = Path(folder) / "empty.py"
        empty.write_text('import streamlit as st\n\nst.write("x")\n')
        rounds: list[tuple[float, float, float]] = []
        for _ in range(args.rounds):
            with serve_script(str(empty)) as address:
                rounds.append(times(browser, address))
        report(FLOOR, rounds)
        for name in pages:
            rounds = []
            for _ in range(args.rounds):
                with serve(args.store) as address:
                    rounds.append(times(browser, f"{address}/{PAGES[name]}"))
            report(name, rounds)
        browser.close()
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


def report(name: str, rounds: list[tuple[float, float, float]]) -> None:
    """One line: a page's median cold, warm and tab seconds, and the ratios of cold and warm
    to their targets."""
    cold, warm, tab = (statistics.median(column) for column in zip(*rounds, strict=True))
    print(
        f"{name:<16} {cold:8.2f} {cold / COLD_TARGET_S:6.2f} "
        f"{warm:8.2f} {warm / WARM_TARGET_S:6.2f} {tab:8.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
