"""Redaction of span attributes before traces are stored or exported.

Secrets are always removed whatever the suite says: attribute keys that name API keys,
authorization headers, cookies, passwords, secrets or tokens, and string values that look
like provider keys (`sk-...`) or bearer credentials anywhere inside a value. A suite adds
its own key patterns with `trace: {redact: ["gen_ai.input.messages", "*.email"]}`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"

ALWAYS_REDACTED_KEYS = (
    "*api_key*",
    "*api-key*",
    "*apikey*",
    "*authorization*",
    "*proxy-authorization*",
    "*cookie*",
    "*password*",
    "*passwd*",
    "*secret*",
    "*private_key*",
    "*credential*",
    "*token",
)
"""Glob patterns over lower-cased attribute keys. `*token` matches `auth_token` and
`http.request.header.x-auth-token` but not the `gen_ai.usage.*_tokens` counts."""

SECRET_VALUE = re.compile(
    r"(?:\bsk-[A-Za-z0-9_\-]{16,}"
    r"|\bBearer\s+[A-Za-z0-9._~+/=\-]{8,}"
    r"|\bBasic\s+[A-Za-z0-9+/=]{8,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bxox[abpr]-[A-Za-z0-9\-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b)",
    re.IGNORECASE,
)


class Redactor:
    """Removes secrets and suite-chosen attributes from span dicts."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        custom = tuple(str(p).lower() for p in patterns)
        self.patterns = ALWAYS_REDACTED_KEYS + custom
        self._key_regex = re.compile(
            "|".join(fnmatch.translate(p) for p in self.patterns), re.IGNORECASE
        )
        self._verdicts: dict[str, bool] = {}

    def redacts_key(self, key: str) -> bool:
        """True when an attribute with this key is replaced entirely."""
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._key_regex.fullmatch(key) is not None
            self._verdicts[key] = verdict
        return verdict

    def value(self, value: Any) -> Any:
        """The value with secret-looking substrings masked, recursing into containers."""
        if isinstance(value, str):
            return SECRET_VALUE.sub(REDACTED, value) if _may_hold_secret(value) else value
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return self.attributes(value)
        return value

    def attributes(self, attributes: Mapping[str, Any]) -> dict[str, Any]:
        """Attributes with redacted keys masked and secret values scrubbed."""
        return {
            key: REDACTED if self.redacts_key(key) else self.value(value)
            for key, value in attributes.items()
        }

    def span(self, span: dict[str, Any]) -> dict[str, Any]:
        """A copy of a span dict with its attributes, events and status message redacted."""
        redacted = dict(span)
        redacted["attributes"] = self.attributes(span.get("attributes") or {})
        redacted["events"] = [
            {**event, "attributes": self.attributes(event.get("attributes") or {})}
            for event in span.get("events") or []
        ]
        status = span.get("status") or {}
        if "message" in status:
            redacted["status"] = {**status, "message": self.value(status["message"])}
        return redacted


def _may_hold_secret(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in ("sk-", "bearer", "basic", "gh", "xox", "akia"))
