"""Optional parts of the harness and the package extra that installs each.

`pip install evals-harness` installs what `evals run` needs. Features that need more are
extras: the dashboard (`[dashboard]`), a PostgreSQL store (`[postgres]`), Ray execution
(`[ray]`), and the agent frameworks. A suite or a command that
needs a missing extra fails before any run with exit code 2, naming the extra to install.
"""

from __future__ import annotations

import importlib.util
import os

from evals.model.errors import SuiteError

EXTRAS: dict[str, tuple[str, ...]] = {
    "dashboard": ("streamlit", "altair", "pandas"),
    "postgres": ("psycopg",),
    "ray": ("ray",),
}
"""Each extra and the modules it makes importable."""

_PROVIDED_BY: dict[str, str] = {
    "openinference": "instrumentation",
    "opentelemetry.instrumentation": "instrumentation",
    "agents": "openai-agents",
    "langgraph": "langgraph",
    "langchain_core": "langgraph",
    "pydantic_ai": "pydantic-ai",
    **{module: extra for extra, modules in EXTRAS.items() for module in modules},
}
"""The extra that installs a module (and its submodules), for naming it when the module is
missing."""


def extra_of_module(module: str) -> str | None:
    """The extra whose packages provide `module` (dotted), None when no extra does."""
    parts = module.split(".")
    for size in range(len(parts), 0, -1):
        extra = _PROVIDED_BY.get(".".join(parts[:size]))
        if extra is not None:
            return extra
    return None


def missing_modules(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here (without importing them)."""
    return [module for module in EXTRAS[extra] if importlib.util.find_spec(module) is None]


def require_extra(
    extra: str, what: str, *, file: str | None = None, line: int | None = None
) -> None:
    """Raise a SuiteError (exit code 2) when `what` needs `extra` and it is not installed."""
    missing = missing_modules(extra)
    if missing:
        raise SuiteError(
            f"{what} needs the [{extra}] extra ({', '.join(missing)} not installed)",
            file=file,
            line=line,
            fix=f"pip install 'evals-harness[{extra}]' "
            f"(in a checkout: pip install -e '.[{extra}]')",
        )


def require_store_driver(url: str | None) -> None:
    """Raise a SuiteError when the store URL (`url`, else $EVALS_STORE_URL) is a PostgreSQL
    one and the `[postgres]` extra is missing; checked before a store process starts."""
    chosen = url or os.environ.get("EVALS_STORE_URL") or ""
    if chosen.startswith(("postgres://", "postgresql://", "postgresql+psycopg://")):
        require_extra("postgres", "a PostgreSQL store")
