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
