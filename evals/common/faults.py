"""A store that cannot be read or written, told in one block instead of a traceback.

Reading or writing the results store (or the response cache) can fail for reasons that are
not bugs: a damaged SQLite file, a full or failing disk, a server that went away. The
command line turns such an exception into one block naming the store, what went wrong and
how to go on, and exits 3. This module recognises them without importing SQLAlchemy or a
database driver: an error raised by one of those is an instance of a class of its module.
"""

from __future__ import annotations

import errno
import sqlite3

_DRIVER_MODULES = ("sqlalchemy.", "psycopg.", "psycopg2.")
_DISK_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.ELOOP}
)
_DAMAGED = ("malformed", "not a database", "file is encrypted", "corrupt")
_DISK = ("disk i/o error", "database or disk is full", "no space left", "disk quota")


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found and len(found) < 8:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def is_store_fault(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) is a database or disk failure, not a bug."""
    for link in _chain(exc):
        if isinstance(link, sqlite3.Error):
            return True
        if isinstance(link, OSError) and link.errno in _DISK_ERRNOS:
            return True
        if any(type(link).__module__.startswith(m.rstrip(".")) for m in _DRIVER_MODULES):
            return True
    return False


def fault_message(exc: BaseException, where: str) -> str:
    """One block: the store `where` could not be used, the database's own words, the fix."""
    cause = next(
        (link for link in reversed(_chain(exc)) if isinstance(link, sqlite3.Error | OSError)),
        exc,
    )
    said = " ".join(str(getattr(cause, "orig", None) or cause).split())[:300]
    lowered = said.lower()
    if any(word in lowered for word in _DAMAGED):
        fix = (
            "the file is damaged: restore it from a backup, or give --store a new file "
            "(the damaged one is left as it is)"
        )
    elif any(word in lowered for word in _DISK) or (
        isinstance(cause, OSError) and cause.errno in _DISK_ERRNOS
    ):
        fix = (
            "free space on its disk (or give --store or --cache a path on another disk) and "
            "run again; `evals run --resume` continues an interrupted evaluation"
        )
    else:
        fix = "check that the store is reachable and writable, then run again"
    return f"{where} could not be read or written: {said}\n  fix: {fix}"
