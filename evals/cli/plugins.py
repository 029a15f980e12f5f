"""`evals plugins`: what installed plugins add, group by group."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evals.model.errors import ExitCode

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals plugins` (no options)."""
    listing = commands.add_parser(
        "plugins", help="list the assertion types, gates, report formats and agents plugins add"
    )
    listing.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """List what installed plugins add, group by group, importing each entry point: exit 2
    when one cannot be used (the error names it and its distribution)."""
    from evals.common import plugins

    broken = 0
    for group, what in plugins.GROUPS.items():
        print(f"{group}: {what}")
        names = plugins.names(group)
        for name in names:
            try:
                plugin = plugins.find(group, name)
                assert plugin is not None
                plugins.load(plugin)
                print(f"  {name} = {plugin.value} ({plugin.distribution})")
            except plugins.PluginError as exc:
                broken += 1
                print(f"  {name}: {exc.message}")
        if not names:
            print("  none installed" if not plugins.disabled() else "  plugins are disabled")
    return int(ExitCode.INVALID_INPUT) if broken else int(ExitCode.OK)
