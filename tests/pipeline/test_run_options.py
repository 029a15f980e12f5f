"""The caller's options and an evaluation's state are never changed: frozen, and read only.

`RunOptions` (what the caller asks) and `EvaluationState` (where a driver of staged,
adaptive or reused-baseline passes stands) are frozen dataclasses: assigning a field raises
at run time, and mypy refuses the assignment in the harness's code, so a changed copy is
always made with `dataclasses.replace`. An evaluation derives its own choices (the
environment's tags, its repeats) without writing them back into what it was given.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from evals.model.options import EvaluationState, RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.pipeline.staged import run_until_decided
from evals.suite import load_suite

SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: echo, label: baseline}
  - {id: echo, label: candidate}
gates:
  baseline: baseline
  candidate: candidate
  environments: {nightly: {tags: [smoke], repeat: 2}}
tests:
  - vars: {q: hello}
    metadata: {tags: [smoke]}
    assert: [{type: contains, value: hello}]
  - vars: {q: world}
    metadata: {tags: [slow]}
    assert: [{type: contains, value: world}]
"""


@pytest.mark.parametrize("kind", [RunOptions, EvaluationState])
def test_every_field_is_frozen(kind: type) -> None:
    value = kind()

    for field in dataclasses.fields(kind):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field.name, getattr(value, field.name))


def test_options_and_state_hold_no_field_twice() -> None:
    asked = {f.name for f in dataclasses.fields(RunOptions)}
    state = {f.name for f in dataclasses.fields(EvaluationState)}

    assert not asked & state


@pytest.mark.parametrize(
    ("tags", "case_ids", "chosen"),
    [
        (None, None, ["smoke"]),
        (None, [], ["smoke"]),
        (["slow"], None, ["slow"]),
        ([], None, []),
        (None, ["c1"], None),
        (["slow"], ["c1"], ["slow"]),
    ],
)
def test_the_caller_s_cases_outrank_the_environment_s_tags(
    tags: list[str] | None, case_ids: list[str] | None, chosen: list[str] | None
) -> None:
    options = RunOptions(tags=tags, case_ids=case_ids)

    assert options.chosen_tags(["smoke"]) == chosen
    assert options.names_cases == (chosen != ["smoke"])


def test_an_evaluation_leaves_its_options_and_state_as_given(
    write_suite: Callable[..., Path],
) -> None:
    suite = load_suite(write_suite(SUITE))
    options = RunOptions(environment="nightly", use_store=False, progress=False, seed=3)
    state = EvaluationState(spend=0.02)
    asked, stood = copy.deepcopy(options), copy.deepcopy(state)

    result = run_evaluation(suite, options, state=state)

    assert options == asked and state == stood
    assert options.tags is None and options.repeat is None
    # the environment chose the cases and the repeats, recorded with the evaluation
    assert result.meta.config["tags"] == ["smoke"]
    assert result.repeat == 2
    assert {r.key.case_id for r in result.records} == {suite.cases[0].id}


def test_a_staged_run_leaves_its_options_and_state_as_given(
    write_suite: Callable[..., Path],
) -> None:
    suite = load_suite(write_suite(SUITE))
    options = RunOptions(use_store=False, progress=False)
    state = EvaluationState()
    asked = copy.deepcopy(options)

    staged = run_until_decided(suite, options, (2, 4), state)

    assert options == asked and state == EvaluationState()
    assert staged.result.repeat in (2, 4)
    # each stage's spend went to that stage's state alone: the first spent less than all
    assert 0 < staged.looks[0].spend < 1 - suite.gates.confidence
