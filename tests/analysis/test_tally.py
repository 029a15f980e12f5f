"""The statistics from counts taken as runs arrive: the same whatever order the runs
complete in, paired tables as the runs' pairs give them, and latency sketches within
their stated rank error."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.analysis.cells import Tally
from evals.analysis.latency import EXACT_RUNS, RANK_ERROR, LatencySample
from evals.analysis.summarize import summarize
from evals.model.gates import GateConfig
from evals.model.suite import Case, SuiteOutline
from evals.stats import cluster_quantile_interval, percentile, weighted_percentile
from tests.analysis.test_analysis import make_run
from tests.reference.test_reference_outputs import assert_close

CASES = [f"c{i}" for i in range(5)]
OUTLINE = SuiteOutline(
    "s",
    None,
    "f",
    ["base", "cand"],
    [
        Case(i, c, c, {}, [], metadata={"tags": ["even" if i % 2 else "odd"]})
        for i, c in enumerate(CASES)
    ],
)

runs = st.lists(
    st.tuples(
        st.sampled_from(CASES),
        st.sampled_from(["base", "cand"]),
        st.integers(0, 5),
        st.sampled_from(["pass", "fail", "error"]),
        st.sampled_from([0.0, 0.001, 0.02, 0.25, 1.0]),
        st.floats(1.0, 5000.0),
        st.sampled_from(["agent_error", "timeout", "infra"]),
    ),
    min_size=1,
    max_size=60,
    unique_by=lambda run: run[:3],
)


def _records(drawn):
    records = []
    for case_id, agent, repeat, status, cost, latency, kind in drawn:
        record = make_run(case_id, agent, repeat, status, cost=cost, latency=latency, kind=kind)
        index = CASES.index(case_id)
        records.append(replace(record, case_index=index, metadata={"shared_seed": repeat}))
    return records


@settings(max_examples=60, deadline=None)
@given(runs, st.randoms(use_true_random=False), st.booleans())
def test_the_summary_does_not_depend_on_the_order_runs_arrive_in(drawn, shuffler, paired):
    config = GateConfig(baseline="base", candidate="cand", paired=paired, exclude_errors=["infra"])
    records = _records(drawn)
    in_order = summarize(records, OUTLINE, config).to_dict()
    shuffled = list(records)
    shuffler.shuffle(shuffled)
    tally = Tally.of(shuffled, config)
    assert_close(summarize(tally, OUTLINE, config).to_dict(), in_order)


def _old_paired_table(candidate, baseline):
    """The pairing the statistics used when they read every run: each candidate run finds
    the baseline run of its prompt and repeat, with the same shared seed."""
    base = {(r.key.prompt_id, r.key.repeat): r for r in baseline}
    table = [0, 0, 0, 0]
    for run in candidate:
        other = base.get((run.key.prompt_id, run.key.repeat))
        seed = None if other is None else other.metadata.get("shared_seed")
        if seed is None or seed != run.metadata.get("shared_seed"):
            return None
        table[(0 if run.passed else 2) + (0 if other.passed else 1)] += 1
    return tuple(table)


@settings(max_examples=80, deadline=None)
@given(runs, st.randoms(use_true_random=False), st.integers(0, 3))
def test_paired_tables_are_those_of_every_run_matched_with_its_pair(drawn, shuffler, broken):
    records = _records([run for run in drawn if run[3] != "error" or run[6] != "infra"])
    for record in records[:broken]:  # a few runs lose or change their shared seed
        record.metadata = {} if broken % 2 else {"shared_seed": -1}
    shuffler.shuffle(records)
    config = GateConfig(baseline="base", candidate="cand", paired=True)
    summary = summarize(Tally.of(records, config), OUTLINE, config)
    rows = summary.comparison.cases if summary.comparison is not None else []
    for row in rows:
        cand = [r for r in records if r.key.case_id == row.case_id and r.key.agent == "cand"]
        base = [r for r in records if r.key.case_id == row.case_id and r.key.agent == "base"]
        expected = _old_paired_table(cand, base) if len(cand) == len(base) else None
        assert row.pair == expected


def test_a_sample_is_exact_up_to_its_capacity_then_a_bounded_sketch():
    rng = random.Random(7)
    values = [rng.lognormvariate(5, 1) for _ in range(EXACT_RUNS)]
    sample = LatencySample()
    for value in values:
        sample.add(value)
    assert sample.exact and sample.items() == (values, [1] * EXACT_RUNS)
    for _ in range(50_000):
        sample.add(rng.lognormvariate(5, 1))
    shown, weights = sample.items()
    assert not sample.exact and len(sample) == sum(weights) == EXACT_RUNS + 50_000
    assert len(shown) < 2_000  # bounded: the sketch keeps a few hundred items


def _rank(ordered, value):
    """The share of `ordered` at or below `value`."""
    low, high = 0, len(ordered)
    while low < high:
        middle = (low + high) // 2
        if ordered[middle] <= value:
            low = middle + 1
        else:
            high = middle
    return low / len(ordered)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_quantiles_from_sketches_lie_within_the_stated_rank_error(seed):
    rng = random.Random(seed)
    groups = [
        [rng.lognormvariate(5 + rng.gauss(0, 0.5), 0.8) for _ in range(rng.randint(300, 3000))]
        for _ in range(40)
    ]
    samples = []
    for group in groups:
        sample = LatencySample()
        for value in group:
            sample.add(value)
        samples.append(sample)
    items = [sample.items() for sample in samples]
    ordered = sorted(v for g in groups for v in g)
    pooled = weighted_percentile(
        [v for values, _ in items for v in values], [w for _, ws in items for w in ws], 0.95
    )
    assert abs(_rank(ordered, pooled) - 0.95) <= RANK_ERROR
    exact = cluster_quantile_interval(groups, 0.95, 0.95)
    approximate = cluster_quantile_interval(
        [values for values, _ in items], 0.95, 0.95, [weights for _, weights in items]
    )
    assert exact[0] == percentile(ordered, 0.95)
    for found, wanted in zip((approximate[0], *approximate[1]), (exact[0], *exact[1]), strict=True):
        assert abs(_rank(ordered, found) - _rank(ordered, wanted)) <= 2 * RANK_ERROR
    assert math.isfinite(approximate[1][0])
