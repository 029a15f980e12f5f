"""Extensions shipped as packages: assertion types, gates, report formats and agent adapters.

A package adds to the harness through entry-point groups, as pytest (`pytest11`) and
inspect_ai load their plugins: it names each extension in its `pyproject.toml`

    [project.entry-points."evals.assertions"]
    "acme:tone" = "acme_evals.graders:tone"

and the harness finds it with `importlib.metadata`. Each group is read once, which
imports nothing; an entry point is imported only when its name is asked for (a suite
uses the assertion type, a report is written in the format, ...). The name is what the
extension is called where users write it: an assertion type, a gate, a report file's
suffix, a provider id's scheme. A plugin that fails to import, or whose entry point does
not hold what its group needs, is a `PluginError` naming the entry point and the
distribution it comes from. `EVALS_DISABLE_PLUGINS=1` turns every plugin off, as
`PYTEST_DISABLE_PLUGIN_AUTOLOAD` does for pytest. docs/extending.md says what each
group's entry points hold.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, ParamSpec, TypeVar

from evals.model.errors import SuiteError

ASSERTIONS = "evals.assertions"
GATES = "evals.gates"
REPORTS = "evals.reports"
AGENTS = "evals.agents"
GROUPS: dict[str, str] = {
    ASSERTIONS: "assertion types (name: the type; value: a grader registered with @register)",
    GATES: "gates (name: the gate; value: its evals.gates.Gate)",
    REPORTS: "report formats (name: the file suffix; value: a renderer)",
    AGENTS: "agent adapters (name: the provider id's scheme; value: an Agent class)",
}
DISABLE_VARIABLE = "EVALS_DISABLE_PLUGINS"


class PluginError(SuiteError):
    """An installed plugin that cannot be used: it fails to import, holds the wrong kind of
    object, or two distributions claim the same name."""


@dataclass(frozen=True, slots=True)
class Plugin:
    """One entry point of a group: its name, what it points at, and the distribution
    (name and version) that declares it."""

    group: str
    name: str
    value: str
    distribution: str
    entry_point: EntryPoint

    def describe(self) -> str:
        """`'acme:tone' = 'acme_evals.graders:tone' (group evals.assertions) of acme-evals
        1.0`: enough to find the plugin that broke."""
        return f"{self.name!r} = {self.value!r} (group {self.group}) of {self.distribution}"


def _distribution(entry_point: EntryPoint) -> str:
    dist = entry_point.dist
    if dist is None:
        return "an unknown distribution"
    return f"{dist.metadata['Name'] or dist.name} {dist.version}"


def disabled() -> bool:
    """True when plugins are turned off (`EVALS_DISABLE_PLUGINS` set to a non-empty value
    other than 0)."""
    return os.environ.get(DISABLE_VARIABLE, "") not in ("", "0")


@functools.cache
def _group(group: str) -> dict[str, tuple[Plugin, ...]]:
    found: dict[str, list[Plugin]] = {}
    for entry_point in entry_points(group=group):
        plugin = Plugin(
            group, entry_point.name, entry_point.value, _distribution(entry_point), entry_point
        )
        claims = found.setdefault(entry_point.name, [])
        if all(p.distribution != plugin.distribution for p in claims):
            claims.append(plugin)
    return {name: tuple(claims) for name, claims in found.items()}


def names(group: str) -> list[str]:
    """The names the installed plugins declare in `group`, sorted (nothing is imported)."""
    return [] if disabled() else sorted(_group(group))


def find(group: str, name: str) -> Plugin | None:
    """The plugin declaring `name` in `group`, None when none does; a PluginError when
    several distributions declare it."""
    if disabled():
        return None
    claims = _group(group).get(name, ())
    if len(claims) > 1:
        raise PluginError(
            f"{len(claims)} installed plugins declare {name!r} in {group}: "
            + "; ".join(p.describe() for p in claims),
            fix="uninstall all but one of these distributions",
        )
    return claims[0] if claims else None


_LOADED: dict[tuple[str, str], Any] = {}


def load(plugin: Plugin) -> Any:
    """The object `plugin` points at, imported on first use; a PluginError naming the
    plugin and its distribution when importing it fails."""
    key = (plugin.group, plugin.name)
    if key not in _LOADED:
        try:
            _LOADED[key] = plugin.entry_point.load()
        except (Exception, SystemExit) as exc:
            raise PluginError(
                f"plugin {plugin.describe()} failed to load: {type(exc).__name__}: {exc}",
                fix=f"fix or uninstall {plugin.distribution.rsplit(' ', 1)[0]}, or set "
                f"{DISABLE_VARIABLE}=1 to run without plugins",
            ) from exc
    return _LOADED[key]


def wrong_kind(plugin: Plugin, needs: str) -> PluginError:
    """The error for an entry point that does not hold what its group needs."""
    return PluginError(
        f"plugin {plugin.describe()} does not hold {needs}",
        fix=f"point the entry point at {needs} (docs/extending.md)",
    )


_P = ParamSpec("_P")
_R = TypeVar("_R")


def guarded(plugin: Plugin, function: Callable[_P, _R], doing: str) -> Callable[_P, _R]:
    """`function`, a part of `plugin`, with what it raises turned into a PluginError naming
    the plugin and its distribution: a plugin's bug is the plugin's error (exit 2 with
    who to ask), not a fault of the harness. A SuiteError the plugin raises on purpose
    (a config it refuses) goes through as it is."""

    @functools.wraps(function)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return function(*args, **kwargs)
        except SuiteError:
            raise
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin.describe()} failed {doing}: {type(exc).__name__}: {exc}",
                fix=f"report it to the authors of {plugin.distribution.rsplit(' ', 1)[0]}, or "
                f"run without it ({DISABLE_VARIABLE}=1)",
            ) from exc

    return call


def load_all(group: str) -> list[tuple[Plugin, Any]]:
    """Every plugin of `group` with its object, each imported (for listings)."""
    loaded = []
    for name in names(group):
        plugin = find(group, name)
        if plugin is not None:
            loaded.append((plugin, load(plugin)))
    return loaded
