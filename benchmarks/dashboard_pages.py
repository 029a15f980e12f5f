"""Time every dashboard page in a real browser on a large store, cold and warm.

    python -m benchmarks.dashboard_pages --chromium /usr/bin/chromium \
        --store sqlite:///.evals/pages.db --evaluations 40 --cases 250 --repeats 5

Fills the store once (evaluations x cases x 2 agents x repeats synthetic runs, see
`benchmarks/dashboard_scale.py`; the defaults make 100,000 runs, `--evaluations 100
--cases 500 --repeats 10` makes 1,000,000), then for each page starts `evals dashboard`
afresh, opens the page in headless Chromium (cold: first visit after the server starts)
and opens it again in a new tab (warm: the server's caches filled). A page's time runs
from navigation until the server reports that the page's script finished (Streamlit's
`script_finished` message on the page's websocket), so it includes every query and the
rendering on the server, and the browser's loading of the app. Prints one line per page
and the ratio of each time to the targets (2 s warm, 3 s cold).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks.dashboard_scale import AGENTS, fill
from evals.store import open_store
from evals.store.dashboard_queries import DashboardQueries
from tests.dashboard.browser import CHROMIUM_ARGS, ScriptRuns, serve

PAGES = ["", "overview", "compare", "case", "runs", "cost_latency"]
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
    args = parser.parse_args()
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

    print(f"{'page':<16} {'cold s':>8} {'/3 s':>6} {'warm s':>8} {'/2 s':>6}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        for name in PAGES:
            with serve(args.store) as address:
                cold = visit(browser, f"{address}/{name}")
                warm = visit(browser, f"{address}/{name}")
            print(
                f"{name or 'what changed':<16} {cold:8.2f} {cold / COLD_TARGET_S:6.2f} "
                f"{warm:8.2f} {warm / WARM_TARGET_S:6.2f}",
                flush=True,
            )
        browser.close()


if __name__ == "__main__":
    main()
