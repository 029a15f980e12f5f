"""defaultTest's options under a test's: promptfoo reads `prefix` and `suffix` with `||`,
so a test's falsy value keeps defaultTest's; `prompts`/`providers` fall back with `??`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evals.common.jsvalues import js_truthy
from evals.suite.test_cases import merge_default

FALSY = st.sampled_from(["", None, 0, 0.0, False, float("nan")])
TRUTHY = st.one_of(st.text(min_size=1), st.integers().filter(bool), st.just([]))


@given(key=st.sampled_from(["prefix", "suffix"]), own=FALSY, default=st.text())
def test_a_falsy_prefix_or_suffix_keeps_default_tests(key, own, default):
    merged = merge_default({"options": {key: own}}, {"options": {key: default}})
    assert merged["options"][key] == default


@given(key=st.sampled_from(["prefix", "suffix"]), own=TRUTHY, default=st.text())
def test_a_truthy_prefix_or_suffix_wins(key, own, default):
    merged = merge_default({"options": {key: own}}, {"options": {key: default}})
    assert merged["options"][key] == own


def test_other_options_take_the_tests_value_even_when_falsy():
    default = {"options": {"transform": "output + '!'", "prefix": "P", "repeat": 3}}
    merged = merge_default({"options": {"transform": "", "repeat": 0}}, default)
    assert merged["options"] == {"transform": "", "prefix": "P", "repeat": 0}


def test_a_falsy_prefix_without_a_default_stays():
    assert merge_default({"options": {"prefix": ""}}, {})["options"] == {"prefix": ""}


def test_null_prompts_and_providers_fall_back_to_default_tests():
    default = {"prompts": ["p1"], "providers": ["echo"]}
    assert merge_default({"prompts": None, "providers": None}, default)["prompts"] == ["p1"]
    assert merge_default({"providers": []}, default)["providers"] == []


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text()))
def test_js_truthy_of_scalars(value):
    falsy = value is None or value is False or value == "" or value == 0 or value != value
    assert js_truthy(value) is not falsy
