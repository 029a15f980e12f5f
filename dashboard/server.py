"""The dashboard's server process: Streamlit with the pages' heavy modules loaded and the
default views' data read first.

`evals dashboard` runs `python -m evals.dashboard.server run app.py ...`. Before handing
its arguments to Streamlit's own command line, this imports what every page script
needs (pandas, Altair, the dashboard's modules and the store), renders one tiny chart
so Altair has loaded its Vega-Lite schema, and loads Streamlit's emoji catalogue (half a
second: the pages' notices carry an emoji icon). Then it runs each page once, headless,
as a first visitor would open it: its queries, comparisons and charts land in the
`st.cache_data` and `st.cache_resource` caches, which every session of the server
shares, so the first visitor's page reads nothing from the store. Those costs are paid
while the server starts, not by the first visitor.

It also serves Streamlit's page shell (`index.html`) with the server's address written
in (`shell_settings`). Without it, the browser opening a page's address (`/compare`)
first looks for the server under that path (`/compare/_stcore/health` and
`/compare/_stcore/host-config`, two 404s and two console errors), then under the root,
after a pause; with it, it asks the root at once.
"""

from __future__ import annotations

import atexit
import json
import logging
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

# Every page a visitor may open without logging in, as `app.py` names them; What changed,
# the landing page, runs first.
VIEWS = (
    "views/overview.py",
    "views/compare.py",
    "views/case.py",
    "views/outputs.py",
    "views/runs.py",
    "views/cost_latency.py",
)
# Seconds one page may take to read and draw its default view while the server starts;
# past it (a store that does not answer) the server stops filling and starts serving.
PREFILL_TIMEOUT_S = 60.0


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


def prefill(app: Path) -> list[str]:
    """Run the landing page and every page of `VIEWS` once in Streamlit's headless
    `AppTest`, filling the caches every session shares; returns the pages that raised.

    A page that fails here is left for its visitor to see the error; the server still
    starts. A page that takes longer than `PREFILL_TIMEOUT_S` ends the filling."""
    from streamlit.runtime import Runtime
    from streamlit.testing.v1 import AppTest

    test = AppTest.from_file(str(app), default_timeout=PREFILL_TIMEOUT_S)
    failed: list[str] = []
    for view in (None, *VIEWS):
        if view is not None:
            test.switch_page(view)
        try:
            test.run()
        except RuntimeError:
            # A run that timed out leaves AppTest's stand-in runtime installed, which
            # would keep Streamlit's own from starting.
            Runtime._instance = None
            return [*failed, view or "landing page"]
        if test.exception:
            failed.append(view or "landing page")
    return failed


# Where Streamlit's page shell loads its scripts; the settings go just before.
SHELL_ANCHOR = '<script type="module"'


def shell_settings(base_url_path: str) -> str:
    """The script that tells Streamlit's front end where its server is: the page's
    origin and `base_url_path`, whatever page the address names (`window.__streamlit`,
    read as the front end starts)."""
    base = json.dumps("/" + base_url_path.strip("/")).replace("<", "\\u003c")
    return f"<script>window.__streamlit={{BACKEND_BASE_URL:window.location.origin+{base}}}</script>"


def shell_directory(static: Path, settings: str, into: Path) -> Path:
    """A copy of Streamlit's static directory `static` in `into` whose `index.html`
    carries `settings`: every other entry links to the original. A shell with no module
    script to precede (another Streamlit build) is served as it is: `static` itself."""
    shell = (static / "index.html").read_text(encoding="utf-8")
    if SHELL_ANCHOR not in shell:
        return static
    for entry in static.iterdir():
        if entry.name != "index.html":
            (into / entry.name).symlink_to(entry)
    (into / "index.html").write_text(
        shell.replace(SHELL_ANCHOR, settings + SHELL_ANCHOR, 1), encoding="utf-8"
    )
    return into


def serve_shell_settings() -> None:
    """Make Streamlit serve its static files from a `shell_directory` built when it sets
    up its routes (its options are read by then)."""
    from streamlit import config, file_util

    original = file_util.get_static_dir

    def static_dir() -> str:
        settings = shell_settings(config.get_option("server.baseUrlPath") or "")
        into = Path(tempfile.mkdtemp(prefix="evals-dashboard-shell-"))
        atexit.register(shutil.rmtree, into, ignore_errors=True)
        return str(shell_directory(Path(original()), settings, into))

    file_util.get_static_dir = static_dir


def load_options(argv: Sequence[str]) -> None:
    """Load Streamlit's configuration with the options of `run ...` (`argv`) before the
    warm-up reads it, as `streamlit run` loads it: when Streamlit's command line loads it
    again, its server section is the same, so it prints no "An update to the [server]
    config option section was detected ... please restart streamlit" notice."""
    from streamlit.web import bootstrap, cli

    context = cli.main_run.make_context("run", list(argv))
    flags = {k: v for k, v in context.params.items() if k not in ("target", "args")}
    bootstrap.load_config_options(flag_options=flags)


# What Streamlit logs when its pages run before its runtime exists (here: on purpose,
# while the server warms up), one line per cached function and page.
BARE_MODE_NOTICES = {
    "streamlit.runtime.caching.cache_data_api": "No runtime found",
    "streamlit.runtime.scriptrunner_utils.script_run_context": "missing ScriptRunContext",
}


class _DropNotice(logging.Filter):
    def __init__(self, notice: str) -> None:
        super().__init__()
        self.notice = notice

    def filter(self, record: logging.LogRecord) -> bool:
        return self.notice not in record.getMessage()


@contextmanager
def bare_mode_quiet() -> Iterator[None]:
    """Leave out Streamlit's notices that its runtime is missing (BARE_MODE_NOTICES) while
    the block runs: the warm-up imports and runs the pages before the server's runtime
    starts, which is expected. Every other message is kept."""
    filters = [
        (logging.getLogger(name), _DropNotice(notice)) for name, notice in BARE_MODE_NOTICES.items()
    ]
    for logger, dropped in filters:
        logger.addFilter(dropped)
    try:
        yield
    finally:
        for logger, dropped in filters:
            logger.removeFilter(dropped)


def main() -> None:
    """Warm up, fill the default views' caches, then run Streamlit's command line on this
    process's arguments (`run app.py ...`)."""
    serving = len(sys.argv) > 2 and sys.argv[1] == "run"
    if serving:
        load_options(sys.argv[2:])
    with bare_mode_quiet():
        warm_up()
        failed = prefill(Path(sys.argv[2])) if serving else []
    for page in failed:
        print(f"evals dashboard: {page} failed while the server started", file=sys.stderr)
    serve_shell_settings()
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
