"""Starting the dashboard's server: Streamlit in place of this process, over the store,
with the login settings and serving options `evals.team.serving` decides."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

from evals.common.extras import require_extra
from evals.team.serving import STREAMLIT_OPTIONS, launch

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
"""The Streamlit app, in the installed package (through a link in a checkout)."""


def dashboard_command(host: str, port: int, extra: list[str]) -> list[str]:
    """The server's command line: Streamlit's `run` through `evals.dashboard.server` on
    `host`:`port`, with the options every visit gains from and `extra` (login secrets)."""
    return [
        sys.executable,
        "-m",
        "evals.dashboard.server",
        "run",
        str(APP),
        "--server.address",
        host,
        "--server.port",
        str(port),
        *STREAMLIT_OPTIONS,
        *extra,
    ]


def start_dashboard(host: str, port: int, insecure_no_auth: bool, store: str | None) -> NoReturn:
    """Serve the dashboard over `store` (None: $EVALS_STORE_URL or the default) on
    `host`:`port`; a non-loopback host needs OpenID Connect login configured, or
    `insecure_no_auth`.

    Streamlit replaces this process, so a signal that stops `evals dashboard` stops the
    server itself and no orphan keeps the port.
    """
    require_extra("dashboard", "evals dashboard")
    from evals.store.location import check_store_settings

    check_store_settings(store)
    extra, settings = launch(host, insecure_no_auth, os.environ, Path.cwd(), Path.home())
    env = {**os.environ, **settings}
    if store:
        env["EVALS_STORE_URL"] = store
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, dashboard_command(host, port, extra), env)
