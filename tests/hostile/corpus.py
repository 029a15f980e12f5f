"""The whole corpus: every category's cases, ids unique, today's failures marked."""

from __future__ import annotations

from dataclasses import replace

from tests.hostile import (
    corpus_agents,
    corpus_cli,
    corpus_datasets,
    corpus_payloads,
    corpus_settings,
    corpus_signals,
    corpus_suites,
)
from tests.hostile.known_failures import KNOWN_FAILURES, failing_cause
from tests.hostile.rootcauses import CAUSES, cause

_ALL = [
    *corpus_suites.CASES,
    *corpus_settings.CASES,
    *corpus_datasets.CASES,
    *corpus_agents.CASES,
    *corpus_cli.CASES,
    *corpus_cli.STORE_CASES,
    *corpus_signals.CASES,
    *corpus_payloads.CASES,
]


def _key(case) -> str:  # Case
    return f"{case.category}/{case.id}"


def _marked(case):  # Case -> Case
    known = failing_cause(_key(case))
    return replace(case, xfail=cause(known)) if known else case


CASES = [_marked(case) for case in _ALL]

_keys = [_key(case) for case in CASES]
assert len(_keys) == len(set(_keys)), sorted({k for k in _keys if _keys.count(k) > 1})
_listed = {k for cases in KNOWN_FAILURES.values() for k in cases}
assert _listed <= set(_keys), sorted(_listed - set(_keys))
assert set(KNOWN_FAILURES) <= set(CAUSES), sorted(set(KNOWN_FAILURES) - set(CAUSES))
