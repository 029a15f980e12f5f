"""The plan: filters, seeds and shards."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.plan.runs import build_plan, count_plan, derive_seed, ref_matches
from evals.suite import load_suite

SUITE = """\
prompts:
  - {raw: 'A {{q}}', label: short}
  - {raw: 'B {{q}}', label: long:v2}
providers:
  - {id: echo, label: openai:chat:small}
  - {id: echo, label: anthropic:messages:big}
evaluateOptions: {repeat: 3}
tests:
  - vars: {q: all}
  - vars: {q: only-openai}
    providers: [openai]
  - vars: {q: only-long}
    prompts: ['long*']
  - vars: {q: none}
    providers: []
"""


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    path = tmp_path_factory.mktemp("plan") / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    return load_suite(path)


def test_filters_follow_promptfoo_reference_rules():
    assert ref_matches("openai", "openai:chat:small")
    assert ref_matches("openai:*", "openai:chat:small")
    assert ref_matches("open*", "openai:chat:small")
    assert not ref_matches("open", "openai:chat:small")
    assert ref_matches("short", "short")
    assert not ref_matches("shorter", "short")


def test_plan_applies_test_filters(suite):
    plan = list(build_plan(suite, 1))
    by_case: dict[str, set[tuple[str, str]]] = {}
    for run in plan:
        by_case.setdefault(run.case.vars["q"], set()).add((run.prompt.label, run.provider.label))
    assert len(by_case["all"]) == 4
    assert by_case["only-openai"] == {
        ("short", "openai:chat:small"),
        ("long:v2", "openai:chat:small"),
    }
    assert {p for p, _ in by_case["only-long"]} == {"long:v2"}
    assert "none" not in by_case


@given(st.integers(1, 6), st.integers(1, 5))
def test_shards_partition_the_plan(suite, total, repeat):
    full = [r.key.as_tuple() for r in build_plan(suite, repeat)]
    shards = [
        [r.key.as_tuple() for r in build_plan(suite, repeat, shard=(i, total))]
        for i in range(1, total + 1)
    ]
    assert sorted(k for shard in shards for k in shard) == sorted(full)
    assert max(map(len, shards)) - min(map(len, shards)) <= 1


def test_seeds_are_stable_and_the_shared_seed_ignores_the_agent(suite):
    assert derive_seed("s", "c", "a", 0) == derive_seed("s", "c", "a", 0)
    assert derive_seed("s", "c", "a", 0) != derive_seed("s", "c", "b", 0)
    assert derive_seed("s", "c", "a", 0) != derive_seed("s", "c", "a", 1)
    assert derive_seed("s", "c", "a", 0, salt=0) == derive_seed("s", "c", "a", 0)
    assert derive_seed("s", "c", "a", 0, salt=7) != derive_seed("s", "c", "a", 0)
    runs = [r for r in build_plan(suite, 2) if r.case.vars["q"] == "all"]
    shared = {(r.prompt.label, r.key.repeat): set() for r in runs}
    for run in runs:
        shared[(run.prompt.label, run.key.repeat)].add(run.shared_seed)
    assert all(len(seeds) == 1 for seeds in shared.values())
    assert len({r.seed for r in runs}) == len({(r.provider.label, r.key.repeat) for r in runs})


UNEVEN = SUITE.replace(
    "  - vars: {q: none}\n",
    "  - vars: {q: five-times}\n    options: {repeat: 5}\n  - vars: {q: none}\n",
)


@pytest.fixture(scope="module")
def uneven(tmp_path_factory):
    path = tmp_path_factory.mktemp("plan") / "suite.yaml"
    path.write_text(UNEVEN, encoding="utf-8")
    return load_suite(path)


@given(
    st.integers(1, 7),
    st.integers(0, 7),
    st.one_of(
        st.none(), st.integers(1, 5).flatmap(lambda n: st.tuples(st.integers(1, n), st.just(n)))
    ),
    st.sampled_from([None, ["openai:chat:small"], ["nobody"]]),
)
def test_the_plan_is_counted_without_being_made(uneven, repeat, start, shard, agents):
    expected = sum(
        1 for _ in build_plan(uneven, repeat, shard=shard, repeat_start=start, agents=agents)
    )
    counted = count_plan(uneven, repeat, shard=shard, repeat_start=start, agents=agents)
    assert counted == expected


def test_a_billion_repeats_are_counted_at_once(uneven):
    # past the five repeats of its own case, every repeat adds the same runs
    step = count_plan(uneven, 7) - count_plan(uneven, 6)
    assert step == sum(1 for r in build_plan(uneven, 7) if r.key.repeat == 6)
    assert count_plan(uneven, 10**9) == count_plan(uneven, 7) + (10**9 - 7) * step
