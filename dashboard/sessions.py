"""Logged-out sessions, refused by the server until they would have expired anyway.

Streamlit's login keeps the user's claims in a signed cookie, and its logout clears that
cookie in the browser that clicked: a copy of the cookie (another browser, a stolen
header) would stay valid until the session's length runs out. So a logout also records
the session, named by a digest of the claims that identify one login (issuer, subject,
issue and authentication time, nonce), and every page refuses a recorded session.

Records live in a JSON-lines file (`$EVALS_REVOKED_SESSIONS`, else
`.evals/revoked-sessions.jsonl` in the server's working directory, the folder the service
may write): they survive a restart and are shared by every server process started from
that folder. Each record is kept until its session would have expired.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

VARIABLE = "EVALS_REVOKED_SESSIONS"
DEFAULT = Path(".evals") / "revoked-sessions.jsonl"
_IDENTIFYING = ("iss", "sub", "iat", "auth_time", "nonce", "sid")


def session_key(claims: Mapping[str, Any]) -> str:
    """A digest naming one login: the claims a fresh login changes (issue time, nonce)
    with the identity they belong to. A copied cookie carries the same claims."""
    identifying = {name: claims.get(name) for name in _IDENTIFYING}
    text = json.dumps(identifying, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def revocations_path() -> Path:
    """Where revoked sessions are recorded."""
    return Path(os.environ.get(VARIABLE) or DEFAULT)


class Revocations:
    """The revoked sessions of a file, read again whenever the file changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.keys: dict[str, float] = {}
        self.seen: tuple[int, int] | None = None

    def _reload(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self.keys, self.seen = {}, None
            return
        if self.seen == (stat.st_mtime_ns, stat.st_size):
            return
        keys: dict[str, float] = {}
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                keys[str(record["key"])] = float(record["until"])
            except (ValueError, KeyError, TypeError):
                continue
        self.keys, self.seen = keys, (stat.st_mtime_ns, stat.st_size)

    def is_revoked(self, key: str, now: float) -> bool:
        """True when the session `key` was logged out and has not expired since."""
        with self.lock:
            self._reload()
            return self.keys.get(key, 0.0) > now

    def revoke(self, key: str, until: float, now: float) -> None:
        """Record that session `key` is logged out until `until` (its expiry); records of
        sessions expired by `now` are dropped as the file is written again."""
        with self.lock:
            self._reload()
            self.keys[key] = max(until, self.keys.get(key, 0.0))
            kept = {k: u for k, u in self.keys.items() if u > now}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(".partial")
            partial.write_text(
                "".join(json.dumps({"key": k, "until": u}) + "\n" for k, u in kept.items()),
                encoding="utf-8",
            )
            os.chmod(partial, 0o600)
            partial.replace(self.path)
            self.keys, self.seen = kept, None


def expiry(claims: Mapping[str, Any], hours: float) -> float:
    """When the login behind `claims` expires (now, when its age is unknown)."""
    issued = claims.get("auth_time") or claims.get("iat")
    try:
        return float(issued) + hours * 3600  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return time.time() + hours * 3600
