"""`evals dashboard`: the results dashboard served over the store."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evals.cli import options, values

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals dashboard` and its options."""
    dashboard = commands.add_parser("dashboard", help="open the results dashboard")
    dashboard.add_argument(
        "--host", default="127.0.0.1", help="bind address (default localhost only)"
    )
    dashboard.add_argument(
        "--port", type=values.port, default=8501, help="port to listen on, 1-65535 (default 8501)"
    )
    dashboard.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="serve a non-loopback address without login (trusted networks only)",
    )
    options.store(dashboard)
    dashboard.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Serve the Streamlit dashboard over the store (read-only, localhost by default); the
    server replaces this process (`evals.team.dashboard_start`)."""
    from evals.team.dashboard_start import start_dashboard

    start_dashboard(args.host, args.port, args.insecure_no_auth, args.store)
