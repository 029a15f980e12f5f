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

A known secret is masked in every form it takes on its way out (`secret_forms`): as it is,
lower- or upper-cased, percent-encoded (a URL, a query), JSON-escaped (once, or twice for
JSON inside a JSON string), HTML-escaped, base64-encoded as a whole, and in hexadecimal.
A secret cut by a truncation (the harness's, or an agent's own "…" before it answered)
leaves a piece at the edge of a text or of a cut marker: a piece of 6 characters or more
of a secret's start at the end of such a segment, or of its end at the start of one, is
masked too. Callers that cut a text mask it first.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import fnmatch
import functools
import html
import json
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

from evals.model.results import Grade

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
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}"
    r"|Bearer\s+[A-Za-z0-9._~+/=\-]{8,}"
    r"|Basic\s+[A-Za-z0-9+/=]{8,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|xox[abpr]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}\b)",
    re.IGNORECASE,
)
"""Provider keys and credentials by their shape (the word boundary that starts each shape
is tested once per position, before the alternatives)."""

SHAPE_MARKERS = ("sk-", "bearer", "basic", "gh", "xox", "akia")
"""Every match of `SECRET_VALUE`, lower-cased, contains one of these."""

UNLOWERED = "\u0130\u0131\u017f"
"""The characters `re.IGNORECASE` matches to a letter of `SHAPE_MARKERS` that `str.lower`
does not turn into that letter (İ and ı match `i`, ſ matches `s`); a text holding one of
them is matched against `SECRET_VALUE` without the marker test."""


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


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), text)


def secret_forms(secret: str) -> frozenset[str]:
    """Every form in which `secret` may leave the process: as it is, lower- and
    upper-cased, its quotes doubled (a CSV cell, a single-quoted YAML scalar),
    percent-encoded (upper- and lower-case hex, `+` or `%20` for spaces, `/`
    kept or not), JSON-escaped (ASCII or not, and escaped twice), HTML-escaped, base64
    of the whole (standard and URL-safe alphabets, padded or not) and hexadecimal of its
    UTF-8 bytes (either case)."""
    forms = {secret, secret.lower(), secret.upper(), html.escape(secret)}
    # quoted as CSV and YAML's single quotes quote: the quote doubled
    forms.update((secret.replace('"', '""'), secret.replace("'", "''")))
    for encoded in (quote(secret, safe=""), quote(secret), quote_plus(secret)):
        forms.update((encoded, _lower_hex(encoded)))
    once = json.dumps(secret)[1:-1]
    forms.update((once, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(once)[1:-1]))
    raw = secret.encode("utf-8", "surrogatepass")
    for encoded_bytes in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded_bytes.decode("ascii")
        forms.update((text, text.rstrip("=")))
    forms.update((raw.hex(), raw.hex().upper()))
    return frozenset(form for form in forms if len(form) >= MIN_REFERENCED_SECRET_LENGTH)


CUT_PIECE = 6
"""The shortest piece of a cut secret that is masked at the edge of a text or of a cut
marker (secrets of MIN_SECRET_LENGTH characters or more)."""

CUT_MARKERS = re.compile(r"…|\.\.\.| \[\.\.\. \d+ characters cut \.\.\.\] ")
"""Where a text was cut: an ellipsis, or the runner's marker in a long error message."""


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
def _fields_of(kind: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]:
    """The field names of a dataclass type and a function reading all of them from an
    instance at once, built once per type."""
    names = tuple(f.name for f in dataclasses.fields(kind))
    if len(names) > 1:
        return names, operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return names, lambda instance: (one(instance),)
    return names, lambda instance: ()


SHORTEST_MASKED = 6
"""No string shorter than this can hold a match of the patterns `Redactor.text` masks:
the shortest matches are a URL query credential such as `?key=x` (6 characters), URL user
info `://a:b@` (7) and a key shape (`Basic ` and 8 characters, 14); a redactor also
lowers its own bound to its shortest known secret. `tests/tracing/test_redact_shortcuts.py`
checks this bound against each pattern's shortest match."""

_ATOMS = frozenset({int, float, bool, type(None), bytes})
"""Types `scrub` returns as they are (exact types: a subclass takes the general path)."""

_CACHE_CHARS = 256
_CACHE_ENTRIES = 4096
"""Scrubbed strings up to `_CACHE_CHARS` long are remembered, at most `_CACHE_ENTRIES` of
them (then the memory starts afresh): a suite's assertion values, grade reasons and vars
recur in every repeat of every run."""


class Redactor:
    """Removes secrets (and, in spans, suite-chosen attributes) from what leaves the process."""

    def __init__(self, patterns: Iterable[str] = (), secrets: Iterable[str] = ()) -> None:
        custom = tuple(str(p).lower() for p in patterns)
        self.patterns = ALWAYS_REDACTED_KEYS + custom
        self._key_regex = re.compile(
            "|".join(fnmatch.translate(p) for p in self.patterns), re.IGNORECASE
        )
        self._verdicts: dict[str, bool] = {}
        self._secret_keys: dict[str, bool] = {}
        chosen = {s for s in secrets if len(s) >= MIN_REFERENCED_SECRET_LENGTH}
        known = sorted({f for s in chosen for f in secret_forms(s)}, key=len, reverse=True)
        self._known = re.compile("|".join(map(re.escape, known))) if known else None
        self._secrets = tuple(known)
        # pieces of cut secrets: starts by their last CUT_PIECE characters, ends by their first
        self._starts: dict[str, list[str]] = {}
        self._ends: dict[str, list[str]] = {}
        for secret in (s for s in chosen if len(s) >= MIN_SECRET_LENGTH):
            for size in range(len(secret) - 1, CUT_PIECE - 1, -1):
                self._starts.setdefault(secret[size - CUT_PIECE : size], []).append(secret[:size])
                self._ends.setdefault(secret[-size:][:CUT_PIECE], []).append(secret[-size:])
        for pieces in (*self._starts.values(), *self._ends.values()):
            pieces.sort(key=len, reverse=True)  # the longest piece at an edge is masked
        # texts shorter than this hold nothing to mask (`secret_values` chooses the secrets)
        self._shortest = min([SHORTEST_MASKED, *map(len, known)])
        self._clean: set[str] = set()
        self._masked: dict[str, str] = {}

    def text(self, text: str) -> str:
        """`text` with known secrets, key shapes and URL credentials masked."""
        if len(text) < self._shortest:  # too short to hold anything masked
            return text
        if text in self._clean:
            return text
        masked = self._masked.get(text)
        if masked is not None:
            return masked
        masked = self._mask(text)
        if len(text) <= _CACHE_CHARS:
            if len(self._clean) + len(self._masked) >= _CACHE_ENTRIES:
                self._clean.clear()
                self._masked.clear()
            if masked is text:
                self._clean.add(text)
            else:
                self._masked[text] = masked
        return masked

    def _mask(self, text: str) -> str:
        """Each pattern substituted in turn, skipped when the text lacks something every
        match of it contains (a known secret, a marker of a key shape, `=`, `://` and `@`)."""
        if self._known is not None and any(secret in text for secret in self._secrets):
            text = self._known.sub(REDACTED, text)
        if self._starts:
            text = self._cut_pieces(text)
        if may_hold_shape(text):
            text = SECRET_VALUE.sub(REDACTED, text)
        if "=" in text:
            text = _URL_QUERY_CREDENTIAL.sub(r"\1" + REDACTED, text)
        if "://" in text and "@" in text:
            text = _URL_USERINFO.sub(r"\1" + REDACTED + "@", text)
        return text

    def _cut_pieces(self, text: str) -> str:
        """`text` with the pieces of cut secrets at the edges of its segments masked (the
        text's own start and end, and each side of a cut marker)."""
        cut = "…" in text or "..." in text
        if not self._piece_at_edges(text) and not (cut and self._piece_at_markers(text)):
            return text
        parts = CUT_MARKERS.split(text) if cut else [text]
        markers = CUT_MARKERS.findall(text) if cut else []
        pieces = [self._mask_edges(part) for part in parts]
        joined = [pieces[0]]
        for marker, piece in zip(markers, pieces[1:], strict=True):
            joined.extend((marker, piece))
        result = "".join(joined)
        return text if result == text else result

    def _piece_at_edges(self, text: str) -> bool:
        return text[-CUT_PIECE:] in self._starts or text[:CUT_PIECE] in self._ends

    def _piece_at_markers(self, text: str) -> bool:
        """Whether a piece of a secret touches a cut marker (found with `str.find`, which
        a text without a piece at a marker costs little)."""
        starts, ends = self._starts, self._ends
        for marker in ("…", "..."):
            at = text.find(marker)
            while at != -1:
                after = at + len(marker)
                if text[at - CUT_PIECE : at] in starts or text[after : after + CUT_PIECE] in ends:
                    return True
                at = text.find(marker, after)
        if "characters cut" not in text:
            return False
        return any(
            text[m.start() - CUT_PIECE : m.start()] in starts
            or text[m.end() : m.end() + CUT_PIECE] in ends
            for m in CUT_MARKERS.finditer(text)
        )

    def _mask_edges(self, segment: str) -> str:
        """`segment` with a secret's start at its end, or a secret's end at its start,
        masked (the longest such piece; the whole secret is masked before this)."""
        for piece in self._starts.get(segment[-CUT_PIECE:], ()):
            if segment.endswith(piece):
                segment = segment[: -len(piece)] + REDACTED
                break
        for piece in self._ends.get(segment[:CUT_PIECE], ()):
            if segment.startswith(piece):
                segment = REDACTED + segment[len(piece) :]
                break
        return segment

    def config(self, value: Any, depth: int = 0) -> Any:
        """A copy of a configuration (the suite's, a provider's) with the values of secret
        keys and headers masked and every string scrubbed with `text`."""
        if isinstance(value, str):
            return self.text(value)
        if depth > _MAX_DEPTH:
            return REDACTED
        if isinstance(value, Mapping):
            copied = {}
            leaves = depth < _MAX_DEPTH  # a member's own depth still allows it as it is
            for key, item in value.items():
                kind: type = type(item)
                if isinstance(item, (str, int, float)) and self._secret_key(key):
                    copied[key] = REDACTED
                elif kind is str:
                    copied[key] = self.text(item)
                elif leaves and kind in _ATOMS:
                    copied[key] = item
                else:
                    copied[key] = self.config(item, depth + 1)
            return copied
        if isinstance(value, list):
            return [self.config(item, depth + 1) for item in value]
        return value

    def _secret_key(self, key: Any) -> bool:
        """`is_secret_name` of a config key, remembered: a suite's keys recur in every test."""
        if type(key) is not str:
            return is_secret_name(str(key))
        verdict = self._secret_keys.get(key)
        if verdict is None:
            verdict = self._secret_keys[key] = is_secret_name(key)
        return verdict

    def scrub(self, value: Any, depth: int = 0) -> Any:
        """`value` with every string in it scrubbed with `text`, walking lists, tuples,
        mappings and dataclass instances (a run record); unchanged parts are the same
        objects, changed dataclasses are shallow copies. Structures deeper than 200 levels
        are not walked further (the agent-output checks refuse them)."""
        kind: type = type(value)
        if kind is str:
            return self.text(value)
        if kind in _ATOMS or depth > _MAX_DEPTH:
            return value
        return _walk_of(kind)(self, value, depth)

    def _changes(self, pairs: Iterable[tuple[Any, Any]], depth: int) -> dict[Any, Any] | None:
        """The members of a container (`(key, member)` pairs) that `scrub` changes, with
        their scrubbed values, or None when none changes; what cannot change (numbers,
        short or known-clean strings, empty containers) costs no call, and plain dicts and
        lists are walked without looking up how."""
        changed = None
        clean, shortest = self._clean, self._shortest
        too_deep = depth > _MAX_DEPTH  # strings are still scrubbed, containers kept as they are
        new: Any
        for key, item in pairs:
            kind: type = type(item)
            if kind is str:
                if len(item) < shortest or item in clean:
                    continue
                new = self.text(item)
            elif kind in _ATOMS or too_deep:
                continue
            elif kind is dict:
                if not item:
                    continue
                new = self._mapping(item, depth)
            elif kind is list:
                if not item:
                    continue
                new = self._sequence(item, depth)
            else:
                new = _walk_of(kind)(self, item, depth)
            if new is not item:
                if changed is None:
                    changed = {}
                changed[key] = new
        return changed

    def _string(self, value: str, depth: int) -> str:
        return self.text(value)

    def _same(self, value: Any, depth: int) -> Any:
        return value

    def _sequence(self, value: list[Any] | tuple[Any, ...], depth: int) -> Any:
        changed = self._changes(enumerate(value), depth + 1)
        if changed is None:
            return value
        items = list(value)
        for index, new in changed.items():
            items[index] = new
        return type(value)(items) if isinstance(value, tuple) else items

    def _mapping(self, value: dict[Any, Any], depth: int) -> dict[Any, Any]:
        changed = self._changes(value.items(), depth + 1)
        renamed = self._renamed_keys(value)
        if changed is None and renamed is None:
            return value
        copied = copy.copy(value)
        copied.update(changed or {})
        if renamed is not None:  # keys hold secrets too: a metric named from {{ env.X }}
            copied = {renamed.get(key, key): item for key, item in copied.items()}
        return copied

    def _renamed_keys(self, value: dict[Any, Any]) -> dict[str, str] | None:
        """The string keys of a mapping that `text` changes, with what it makes of them."""
        renamed = None
        clean, shortest = self._clean, self._shortest
        for key in value:
            if type(key) is not str or len(key) < shortest or key in clean:
                continue
            masked = self.text(key)
            if masked != key:
                if renamed is None:
                    renamed = {}
                renamed[key] = masked
        return renamed

    def _dataclass(self, value: Any, depth: int) -> Any:
        kind: type = type(value)
        names, values = _fields_of(kind)
        # `values` reads one value per name: the lengths need no check on every record
        changed = self._changes(zip(names, values(value), strict=False), depth + 1)
        if changed is None:
            return value
        clone = copy.copy(value)
        for name, new in changed.items():
            object.__setattr__(clone, name, new)
        return clone

    def _grade(self, value: Grade, depth: int) -> Any:
        """`_dataclass` of a grade, answered without the general walk when the grade
        holds nothing to mask (the usual case: a test's grade and one per assertion in
        every run)."""
        if self._grade_unchanged(value, depth):
            return value
        return self._dataclass(value, depth)

    def _grade_unchanged(self, grade: Grade, depth: int) -> bool:
        """True only when `_dataclass` would return `grade` itself: its reason and the
        strings of its assertion are clean, its flags and score plain values, its other
        dicts empty and each of its components unchanged in the same way. Anything else
        (nested assertion values, a tree near the depth limit) is left to the general
        walk."""
        if depth + 2 > _MAX_DEPTH:
            return False
        shortest, clean = self._shortest, self._clean
        reason = grade.reason
        if type(reason) is str:
            if len(reason) >= shortest and reason not in clean and self.text(reason) is not reason:
                return False
        elif type(reason) not in _ATOMS:
            return False
        if (
            type(grade.passed) not in _ATOMS
            or type(grade.score) not in _ATOMS
            or type(grade.policy_violation) not in _ATOMS
            or type(grade.errored) not in _ATOMS
            or type(grade.named_scores) is not dict
            or grade.named_scores
            or type(grade.tokens_used) is not dict
            or grade.tokens_used
            or type(grade.metadata) is not dict
            or grade.metadata
        ):
            return False
        assertion = grade.assertion
        if assertion is not None:
            if type(assertion) is not dict:
                return False
            for item in assertion.values():
                kind = type(item)
                if kind is str:
                    if len(item) >= shortest and item not in clean and self.text(item) is not item:
                        return False
                elif kind not in _ATOMS:
                    return False
        components = grade.component_results
        if type(components) is not list:
            return False
        for child in components:
            if type(child) is not Grade or not self._grade_unchanged(child, depth + 2):
                return False
        return True

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


@functools.cache
def _walk_of(kind: type) -> Callable[[Redactor, Any, int], Any]:
    """How `Redactor.scrub` walks a value of type `kind`, decided once per type."""
    if kind is Grade:
        return Redactor._grade
    if issubclass(kind, str):
        return Redactor._string
    if issubclass(kind, (list, tuple)):
        return Redactor._sequence
    if issubclass(kind, dict):
        return Redactor._mapping
    if dataclasses.is_dataclass(kind) and not issubclass(kind, type):
        return Redactor._dataclass
    return Redactor._same


def may_hold_shape(text: str) -> bool:
    """False only when `SECRET_VALUE` cannot match `text`: no shape marker in its lower
    case, and none of the characters `str.lower` leaves apart from the letter they match."""
    lowered = text.lower()
    return any(marker in lowered for marker in SHAPE_MARKERS) or any(
        char in text for char in UNLOWERED
    )
