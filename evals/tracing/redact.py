"""The one redactor for everything that leaves the process: spans, runs, reports.

Secrets are always removed whatever the suite says: values under keys that name API keys,
authorization headers, cookies, passwords, secrets or tokens; string values that look
like provider keys (`sk-...`) or bearer credentials anywhere inside a value; credentials
in URLs (`?api_key=...`, `user:password@`); and every value the harness knows to be a
secret (`secret_values`: environment variables with secret-looking names, which is what
`{{ env.X }}` references and the SDK key variables read, and the values under secret keys
of the providers' configs; from 4 characters on when the suite reads it as
`{{ env.X }}`, from 8 otherwise), wherever it appears. A suite adds its own span key patterns
with `trace: {redact: ["gen_ai.input.messages", "*.email"]}`.
"""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import functools
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


_URL_QUERY_CREDENTIAL = re.compile(
    r"([?&](?:api[_-]?key|apikey|key|token|access[_-]?token|auth|password|secret|sig|signature)=)"
    r"[^&#\s'\"]+",
    re.IGNORECASE,
)
_URL_USERINFO = re.compile(r"(://[^/\s:@]+:)[^/\s@]+@")

MIN_SECRET_LENGTH = 8
"""Known secret values shorter than this are not masked: masking `1` or `true` everywhere
would destroy the data and protect nothing. Texts shorter than the shortest secret to
mask are passed over unread (the common short strings cost nothing)."""

MIN_REFERENCED_SECRET_LENGTH = 4
"""A secret the suite reads through `{{ env.X }}` is masked from this length on: the
suite put it into requests, so it is masked even when shorter than MIN_SECRET_LENGTH."""

_MAX_DEPTH = 200
_SECRET_NAME = re.compile(
    "|".join(fnmatch.translate(p) for p in (*ALWAYS_REDACTED_KEYS, "*_key", "*-key")),
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """True for a config key, header or environment variable name that holds a secret
    (`apiKey`, `Authorization`, `X-Api-Key`, `OPENAI_API_KEY`, `DB_PASSWORD`, `GH_TOKEN`)."""
    return _SECRET_NAME.fullmatch(name) is not None


def secret_values(
    environ: Mapping[str, str], configs: Iterable[Any] = (), referenced: Iterable[str] = ()
) -> frozenset[str]:
    """The values to mask wherever they appear: environment variables with secret-looking
    names (what `{{ env.X }}` and the SDK providers read) and the string values under
    secret keys of `configs` (the providers' configs, headers included), from
    MIN_SECRET_LENGTH characters on.

    `referenced` names the variables the suite reads as `{{ env.X }}`: the value of such a
    variable is masked from MIN_REFERENCED_SECRET_LENGTH characters on when its name looks
    secret or it ends up under a secret key of a config (a short key or password).
    """
    found = {value for name, value in environ.items() if is_secret_name(name)}
    under_keys: set[str] = set()
    for config in configs:
        under_keys.update(_values_under_secret_keys(config, 0))
    found.update(under_keys)
    long = {v for v in found if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
    for name in referenced:
        value = environ.get(name)
        if not isinstance(value, str) or len(value) < MIN_REFERENCED_SECRET_LENGTH:
            continue
        if is_secret_name(name) or value in under_keys:
            long.add(value)
    return frozenset(long)


def _values_under_secret_keys(value: Any, depth: int) -> Iterable[str]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, str) and is_secret_name(str(key)):
                yield item
                yield from (part for part in item.split() if len(part) >= MIN_SECRET_LENGTH)
            else:
                yield from _values_under_secret_keys(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _values_under_secret_keys(item, depth + 1)


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    """The field names of a dataclass type, looked up once per type."""
    return tuple(f.name for f in dataclasses.fields(kind))


class Redactor:
    """Removes secrets (and, in spans, suite-chosen attributes) from what leaves the process."""

    def __init__(self, patterns: Iterable[str] = (), secrets: Iterable[str] = ()) -> None:
        custom = tuple(str(p).lower() for p in patterns)
        self.patterns = ALWAYS_REDACTED_KEYS + custom
        self._key_regex = re.compile(
            "|".join(fnmatch.translate(p) for p in self.patterns), re.IGNORECASE
        )
        self._verdicts: dict[str, bool] = {}
        known = sorted(
            {s for s in secrets if len(s) >= MIN_REFERENCED_SECRET_LENGTH}, key=len, reverse=True
        )
        self._known = re.compile("|".join(map(re.escape, known))) if known else None
        # texts shorter than this hold nothing to mask (`secret_values` chooses the secrets)
        self._shortest = min([MIN_SECRET_LENGTH, *map(len, known)])

    def text(self, text: str) -> str:
        """`text` with known secrets, key shapes and URL credentials masked."""
        if len(text) < self._shortest:  # too short to hold any secret it would mask
            return text
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        if _may_hold_secret(text):
            text = SECRET_VALUE.sub(REDACTED, text)
        if "=" in text:
            text = _URL_QUERY_CREDENTIAL.sub(r"\1" + REDACTED, text)
        if "://" in text and "@" in text:
            text = _URL_USERINFO.sub(r"\1" + REDACTED + "@", text)
        return text

    def config(self, value: Any, depth: int = 0) -> Any:
        """A copy of a configuration (the suite's, a provider's) with the values of secret
        keys and headers masked and every string scrubbed with `text`."""
        if isinstance(value, str):
            return self.text(value)
        if depth > _MAX_DEPTH:
            return REDACTED
        if isinstance(value, Mapping):
            return {
                key: REDACTED
                if is_secret_name(str(key)) and isinstance(item, (str, int, float))
                else self.config(item, depth + 1)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [self.config(item, depth + 1) for item in value]
        return value

    def scrub(self, value: Any, depth: int = 0) -> Any:
        """`value` with every string in it scrubbed with `text`, walking lists, tuples,
        mappings and dataclass instances (a run record); unchanged parts are the same
        objects, changed dataclasses are shallow copies. Structures deeper than 200 levels
        are not walked further (the agent-output checks refuse them)."""
        if isinstance(value, str):
            return self.text(value)
        if depth > _MAX_DEPTH or value is None or isinstance(value, (int, float, bytes)):
            return value
        if isinstance(value, (list, tuple)):
            items = [self.scrub(item, depth + 1) for item in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return type(value)(items) if isinstance(value, tuple) else items
        if isinstance(value, dict):
            changed = {}
            for key, item in value.items():
                new = self.scrub(item, depth + 1)
                if new is not item:
                    changed[key] = new
            if not changed:
                return value
            copied = copy.copy(value)
            copied.update(changed)
            return copied
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            updates = {}
            for name in _field_names(type(value)):
                old = getattr(value, name)
                new = self.scrub(old, depth + 1)
                if new is not old:
                    updates[name] = new
            if not updates:
                return value
            clone = copy.copy(value)
            for name, new in updates.items():
                object.__setattr__(clone, name, new)
            return clone
        return value

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
            return self.text(value)
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
