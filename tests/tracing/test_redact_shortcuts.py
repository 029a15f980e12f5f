"""The redactor's shortcuts mask exactly what its patterns mask.

`Redactor.text` skips short strings, remembers strings it has scrubbed and applies each
pattern only when the text holds something every match of it contains; `Redactor.scrub`
walks records without a call per number. Each shortcut is checked here against a plain
reference: every pattern substituted in turn over every string, with the shapes'
original expression, walking every value.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import re
import sys
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.trajectory import Step
from evals.tracing.redact import (
    _CACHE_CHARS,
    _CACHE_ENTRIES,
    CUT_PIECE,
    MIN_REFERENCED_SECRET_LENGTH,
    MIN_SECRET_LENGTH,
    REDACTED,
    SECRET_VALUE,
    SHAPE_MARKERS,
    SHORTEST_MASKED,
    UNLOWERED,
    Redactor,
    is_secret_name,
)

# The key shapes as first written: a word boundary inside each alternative.
REFERENCE_SHAPES = re.compile(
    r"(?:\bsk-[A-Za-z0-9_\-]{16,}"
    r"|\bBearer\s+[A-Za-z0-9._~+/=\-]{8,}"
    r"|\bBasic\s+[A-Za-z0-9+/=]{8,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bxox[abpr]-[A-Za-z0-9\-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b)",
    re.IGNORECASE,
)
URL_QUERY = re.compile(
    r"([?&](?:api[_-]?key|apikey|key|token|access[_-]?token|auth|password|secret|sig|signature)=)"
    r"[^&#\s'\"]+",
    re.IGNORECASE,
)
URL_USERINFO = re.compile(r"(://[^/\s:@]+:)[^/\s@]+@")

SECRETS = ("hunter2-hunter2", "Zq9!x7$k", "sk-known-value-123456", "pw42")


def reference_forms(secret: str) -> set[str]:
    """A secret as it is, re-cased, percent-, JSON- and HTML-escaped and in base64."""
    quoted = [quote(secret, safe=""), quote(secret), quote_plus(secret)]
    escaped = json.dumps(secret)[1:-1]
    encoded = [
        base64.b64encode(secret.encode("utf-8", "surrogatepass")).decode(),
        base64.urlsafe_b64encode(secret.encode("utf-8", "surrogatepass")).decode(),
    ]
    forms = {secret, secret.lower(), secret.upper(), html.escape(secret), escaped}
    forms.update(quoted + [re.sub("%..", lambda m: m.group(0).lower(), q) for q in quoted])
    forms.update((json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(escaped)[1:-1]))
    forms.update(encoded + [e.rstrip("=") for e in encoded])
    return {f for f in forms if len(f) >= MIN_REFERENCED_SECRET_LENGTH}


def reference_edges(segment: str, secrets: tuple[str, ...]) -> str:
    """The longest piece (6 characters or more, not the whole) of a long secret's start at
    the segment's end, then of a secret's end at its start, masked."""
    long = [s for s in secrets if len(s) >= MIN_SECRET_LENGTH]
    starts = [s[:n] for s in long for n in range(CUT_PIECE, len(s)) if segment.endswith(s[:n])]
    if starts:
        segment = segment[: -max(map(len, starts))] + REDACTED
    ends = [s[-n:] for s in long for n in range(CUT_PIECE, len(s)) if segment.startswith(s[-n:])]
    if ends:
        segment = REDACTED + segment[max(map(len, ends)) :]
    return segment


def reference_text(text: str, secrets: tuple[str, ...] = SECRETS) -> str:
    """Every pattern substituted, in order, with no shortcut."""
    chosen = [s for s in secrets if len(s) >= MIN_REFERENCED_SECRET_LENGTH]
    known = sorted({f for s in chosen for f in reference_forms(s)}, key=len, reverse=True)
    if known:
        text = re.sub("|".join(map(re.escape, known)), REDACTED, text)
    parts = re.split(r"(…|\.\.\.| \[\.\.\. \d+ characters cut \.\.\.\] )", text)
    text = "".join(p if i % 2 else reference_edges(p, tuple(chosen)) for i, p in enumerate(parts))
    text = REFERENCE_SHAPES.sub(REDACTED, text)
    text = URL_QUERY.sub(r"\1" + REDACTED, text)
    return URL_USERINFO.sub(r"\1" + REDACTED + "@", text)


def reference_scrub(value: Any) -> Any:
    """Every string of `value` through `reference_text`, every container rebuilt."""
    if isinstance(value, str):
        return reference_text(value)
    if isinstance(value, list):
        return [reference_scrub(v) for v in value]
    if isinstance(value, tuple):
        return tuple(reference_scrub(v) for v in value)
    if isinstance(value, dict):
        return {k: reference_scrub(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: reference_scrub(getattr(value, f.name)) for f in dataclasses.fields(value)
        }
        return dataclasses.replace(value, **changes)
    return value


FRAGMENTS = st.sampled_from(
    [
        "sk-",
        "SK-",
        "\u017fk-",
        "Bearer ",
        "bearer\t",
        "BASIC ",
        "bas\u0131c ",
        "bas\u0130c ",
        "ghp_",
        "gh",
        "xoxb-",
        "AKIA",
        "ak\u0131a",
        "\u212aey",
        "?",
        "&",
        "key=",
        "api_key=",
        "SIG=",
        "=",
        "://",
        "user:",
        "@",
        " ",
        "\n",
        "-",
        "_",
        "A1b2C3d4",
        "0123456789ABCDEF",
        "abcdefghij",
        *SECRETS,
        "hunter2",
        "hunter2-hun",
        "2-hunter2",
        "HUNTER2-HUNTER2",
        "aHVudGVyMi1odW50ZXIy",
        "Zq9%21x7%24k",
        "…",
        "...",
        " [... 12 characters cut ...] ",
    ]
)
TEXTS = st.lists(st.one_of(FRAGMENTS, st.text(max_size=6)), max_size=14).map("".join)


@pytest.mark.slow
@settings(max_examples=200)
@given(text=TEXTS)
@example(text="pw42")  # a short secret the suite reads: shorter than any pattern's match
@example(text="\u017fk-0123456789ABCDEF0")  # ſ matches s: a shape that lower() hides
@example(text="token: bas\u0131c A1b2C3d4A1b2C3d4")
@example(text="AK\u0130A0123456789ABCDEF, then ?key=x")
@example(text="Bearer A1b2C3d4 at https://user:pw@host/?api_key=hunter2-hunter2&x=1")
def test_text_masks_what_every_pattern_in_turn_masks(text: str) -> None:
    redactor = Redactor(secrets=SECRETS)
    assert redactor.text(text) == reference_text(text)
    assert redactor.text(text) == reference_text(text)  # the remembered answer too


@pytest.mark.slow
@settings(max_examples=200)
@given(texts=st.lists(TEXTS, min_size=1, max_size=6))
@example(texts=["pw42", "pw42 and hunter2-hunter2"])
def test_scrub_of_a_record_matches_the_plain_walk(texts: list[str]) -> None:
    first, *rest = texts
    step = Step("tool", "fetch", {"url": first, "n": 3, "nested": [rest, {"x": first}]})
    component = Grade(True, 1.0, first, {"type": "equals", "value": first})
    record = RunRecord(
        key=RunKey("", "case-1", "agent", 0),
        case_index=0,
        prompt_index=0,
        agent_index=0,
        seed=1,
        prompt=first,
        vars={"q": first, "more": tuple(rest), "empty": {}},
        response=AgentResponse(output={"text": rest}, error=first, trajectory=[step]),
        status="pass",
        grade=Grade(True, 1.0, "ok", component_results=[component]),
        metadata={"shared_seed": 3, "note": first},
    )
    redactor = Redactor(secrets=SECRETS)
    assert redactor.scrub(record) == reference_scrub(record)


GRADE_VALUES = st.one_of(
    TEXTS,
    st.integers(),
    st.floats(allow_nan=False),
    st.none(),
    st.booleans(),
    st.lists(TEXTS, max_size=2),
    st.dictionaries(st.sampled_from(["text", "n"]), TEXTS, max_size=2),
)
GRADE_DICTS = st.one_of(
    st.just({}), st.dictionaries(st.sampled_from(["m", "note"]), TEXTS, max_size=2)
)


def _grades(components: st.SearchStrategy[list[Grade]]) -> st.SearchStrategy[Grade]:
    return st.builds(
        Grade,
        passed=st.one_of(st.booleans(), TEXTS),
        score=st.one_of(st.floats(allow_nan=False), TEXTS),
        reason=st.one_of(TEXTS, st.sampled_from(["Assertion passed", "All assertions passed"])),
        assertion=st.one_of(
            st.none(),
            st.dictionaries(st.sampled_from(["type", "value", "metric"]), GRADE_VALUES, max_size=3),
        ),
        named_scores=GRADE_DICTS,
        component_results=components,
        tokens_used=GRADE_DICTS,
        policy_violation=st.booleans(),
        errored=st.booleans(),
        metadata=GRADE_DICTS,
    )


GRADE_TREES = st.recursive(
    _grades(st.just([])), lambda inner: _grades(st.lists(inner, max_size=3)), max_leaves=8
)


@pytest.mark.slow
@settings(max_examples=300)
@given(grade=GRADE_TREES)
@example(grade=Grade(True, 1.0, "ok", {"type": "equals", "value": "hunter2-hunter2"}))
@example(grade=Grade(True, 1.0, "ok", component_results=[Grade(False, 0.0, "see ?key=abc")]))
def test_scrub_of_a_grade_tree_matches_the_plain_walk(grade: Grade) -> None:
    """Grades take a shortcut (the tree is looked over before any walk); it masks what the
    plain walk masks, and a grade with nothing to mask comes back as the same object."""
    redactor = Redactor(secrets=SECRETS)
    expected = reference_scrub(grade)
    for _ in range(2):  # the second time with the strings remembered
        scrubbed = redactor.scrub(grade)
        assert scrubbed == expected
        assert (scrubbed is grade) == (expected == grade)


def test_a_grade_tree_near_the_depth_limit_is_scrubbed_as_the_plain_walk() -> None:
    for levels in range(96, 104):
        grade = Grade(
            False, 0.0, "leaf says ?key=abc", {"type": "equals", "value": "hunter2-hunter2"}
        )
        for _ in range(levels):
            grade = Grade(True, 1.0, "All assertions passed", component_results=[grade])
        redactor = Redactor(secrets=SECRETS)
        assert redactor.scrub(grade) == _deep_scrub(grade), levels
    deep = Grade(True, 1.0, "All assertions passed")
    for _ in range(5_000):  # beyond the interpreter's recursion limit: the shortcut stops too
        deep = Grade(True, 1.0, "All assertions passed", component_results=[deep])
    assert Redactor(secrets=SECRETS).scrub(deep) is deep


def _deep_scrub(value: Any, depth: int = 0) -> Any:
    """`reference_scrub` with the walk's depth limit: below 200 levels, strings are still
    scrubbed and containers kept as they are."""
    if isinstance(value, str):
        return reference_text(value)
    if depth > 200:
        return value
    if isinstance(value, list):
        return [
            _deep_scrub(v, depth + 1) if isinstance(v, str) or depth + 1 <= 200 else v
            for v in value
        ]
    if isinstance(value, dict):
        return {
            k: _deep_scrub(v, depth + 1) if isinstance(v, str) or depth + 1 <= 200 else v
            for k, v in value.items()
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value,
            **{
                f.name: _deep_scrub(getattr(value, f.name), depth + 1)
                for f in dataclasses.fields(value)
            },
        )
    return value


def test_scrub_keeps_unchanged_parts_and_leaves_the_input_alone() -> None:
    redactor = Redactor(secrets=SECRETS)
    clean = {"a": "plain words here", "b": [1, 2.5, None, True], "c": {"d": "more plain text"}}
    assert redactor.scrub(clean) is clean
    leaky = {"keep": clean["c"], "leak": ["fine", "key hunter2-hunter2 inside"]}
    scrubbed = redactor.scrub(leaky)
    assert scrubbed["keep"] is clean["c"]
    assert scrubbed["leak"] == ["fine", f"key {REDACTED} inside"]
    assert leaky["leak"][1] == "key hunter2-hunter2 inside"


def test_no_shorter_string_can_hold_a_masked_match() -> None:
    """`SHORTEST_MASKED` is at most the shortest match of every pattern text applies."""
    from re import _parser  # type: ignore[attr-defined]

    shortest = [
        _parser.parse(p.pattern, p.flags).getwidth()[0]
        for p in (SECRET_VALUE, REFERENCE_SHAPES, URL_QUERY, URL_USERINFO)
    ]
    assert min([*shortest, MIN_SECRET_LENGTH]) == SHORTEST_MASKED
    assert Redactor().text("?key=x") == f"?key={REDACTED}"


def test_the_marker_test_sees_every_case_variant_the_shapes_match() -> None:
    """A character that `re.IGNORECASE` matches to a marker's letter either lower-cases to
    that letter (so the marker test finds it) or is one of `UNLOWERED`."""
    letters = sorted({c for marker in SHAPE_MARKERS for c in marker if c.isalpha()})
    any_letter = re.compile("[" + "".join(letters) + "]", re.IGNORECASE)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if any_letter.fullmatch(char):
            assert char.lower() in letters or char in UNLOWERED, hex(code)


def test_remembered_strings_are_forgotten_beyond_the_bound() -> None:
    redactor = Redactor(secrets=SECRETS)
    for index in range(10_000):
        assert redactor.text(f"harmless line {index}") == f"harmless line {index}"
        assert len(redactor._clean) + len(redactor._masked) <= _CACHE_ENTRIES
    assert redactor.text("x" * (_CACHE_CHARS + 1)) == "x" * (_CACHE_CHARS + 1)
    assert "x" * (_CACHE_CHARS + 1) not in redactor._clean
    assert redactor.text("the key hunter2-hunter2") == f"the key {REDACTED}"
    assert redactor.text("the key hunter2-hunter2") == f"the key {REDACTED}"


def reference_config(value: Any, depth: int = 0) -> Any:
    """A config with secret keys' values masked and every string scrubbed, rebuilt whole,
    each key tested by its own `is_secret_name` (no remembered verdicts)."""
    if isinstance(value, str):
        return reference_text(value)
    if depth > 200:
        return REDACTED
    if isinstance(value, dict):
        return {
            key: REDACTED
            if is_secret_name(str(key)) and isinstance(item, (str, int, float))
            else reference_config(item, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [reference_config(item, depth + 1) for item in value]
    return value


KEYS = st.sampled_from(["apiKey", "Authorization", "text", "value", "x-api-key", "token", "n"])
CONFIG_LEAVES = st.one_of(
    TEXTS, st.integers(), st.floats(allow_nan=False), st.none(), st.booleans()
)
CONFIGS = st.recursive(
    CONFIG_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(KEYS, st.integers(0, 2), st.booleans()), inner, max_size=4),
    ),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=200)
@given(config=CONFIGS)
def test_config_masks_what_the_plain_rebuild_masks(config: Any) -> None:
    redactor = Redactor(secrets=SECRETS)
    assert redactor.config(config) == reference_config(config)
    assert redactor.config(config) == reference_config(config)  # remembered key verdicts


def test_config_around_the_depth_limit_masks_what_the_plain_rebuild_masks() -> None:
    for levels in range(196, 204):
        nested: Any = {"n": 5, "text": "plain words", "apiKey": 7, "deeper": {"m": 1.5}}
        for _ in range(levels):
            nested = [nested]
        expected = reference_config(nested)
        assert Redactor(secrets=SECRETS).config(nested) == expected, levels
