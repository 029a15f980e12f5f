"""The planned runs of an evaluation: every (prompt, case, agent, repeat), with seeds.

The plan is deterministic: the same suite and options always give the same runs in the
same order, so shards split it evenly and a resumed evaluation knows what is missing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from evals.model.errors import SuiteError
from evals.model.plan import PlannedRun
from evals.model.results import RunKey
from evals.model.suite import Case, Prompt, ProviderSpec, Suite


def derive_seed(suite_id: str, case_id: str, agent: str, repeat: int, salt: int = 0) -> int:
    """A 31-bit seed from (suite, case, agent, repeat): stable across machines and runs.

    With `agent=""` it is the run's shared seed, the same for every agent on one (case,
    repeat): agents that draw their environment's randomness from it meet the same world,
    which pairs their runs for the paired statistics. A non-zero `salt` (the run's
    `--seed`) draws a fresh, equally reproducible set of seeds, e.g. one per night.
    """
    key = f"{suite_id}\x1f{case_id}\x1f{agent}\x1f{repeat}"
    if salt:
        key += f"\x1f{salt}"
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def select_cases(
    cases: list[Case], tags: list[str] | None, case_ids: list[str] | None
) -> list[Case]:
    """Cases having any of `tags` (and, when given, one of `case_ids`)."""
    chosen = cases
    if tags:
        wanted = set(tags)
        chosen = [c for c in chosen if wanted.intersection(c.tags)]
    if case_ids:
        ids = set(case_ids)
        chosen = [c for c in chosen if c.id in ids]
    return chosen


def ref_matches(ref: str, *names: str) -> bool:
    """promptfoo's reference matching for a test's `providers:`/`prompts:` filters.

    A reference matches a label or id exactly, as a prefix when it ends in `*`
    (`openai:*`), or as a namespace (`openai` matches `openai:chat:gpt-4o`).
    """
    for name in names:
        if name == ref or name.startswith(f"{ref}:"):
            return True
        if ref.endswith("*") and name.startswith(ref[:-1]):
            return True
    return False


def _applies(filter_values: list[str] | None, *names: str) -> bool:
    """An absent filter allows everything; an empty one nothing (as promptfoo)."""
    return filter_values is None or any(ref_matches(ref, *names) for ref in filter_values)


def case_repeat(case: Case, repeat: int) -> int:
    """How many times a case runs: its `options.repeat` (a positive integer) wins over the
    evaluation's repeat count, as in promptfoo."""
    own = case.options.get("repeat")
    if isinstance(own, int) and not isinstance(own, bool) and 0 < own <= 2**53:
        return own
    return repeat


def build_plan(
    suite: Suite,
    repeat: int,
    *,
    tags: list[str] | None = None,
    case_ids: list[str] | None = None,
    agents: list[str] | None = None,
    shard: tuple[int, int] | None = None,
    repeat_start: int = 0,
    salt: int = 0,
) -> Iterator[PlannedRun]:
    """Yield the runs, repeat-major so early results cover every case.

    `shard=(i, n)` keeps every n-th run starting at i-1 (1-based i), which splits the plan
    evenly and deterministically. `repeat_start` leaves out the repeats below it (they ran
    in an earlier stage); shards are still cut from the whole plan, so a run belongs to
    the same shard whatever the stage. `salt` is mixed into every derived seed.
    """
    cases = select_cases(suite.cases, tags, case_ids)
    providers = [p for p in suite.providers if agents is None or p.label in agents]
    repeats = {case.index: case_repeat(case, repeat) for case in cases}
    position = 0
    for r in range(max(repeats.values(), default=repeat)):
        for case in cases:
            if r >= repeats[case.index]:
                continue
            shared_seed = derive_seed(suite.suite_id, case.id, "", r, salt)
            for pi, prompt, ai, provider in _pairs(suite, case, providers):
                index = position
                position += 1
                if r < repeat_start:
                    continue
                if shard is not None and index % shard[1] != shard[0] - 1:
                    continue
                yield PlannedRun(
                    key=RunKey(
                        prompt.id if len(suite.prompts) > 1 else "", case.id, provider.label, r
                    ),
                    case=case,
                    prompt=prompt,
                    provider=provider,
                    prompt_index=pi,
                    agent_index=ai,
                    seed=derive_seed(suite.suite_id, case.id, provider.label, r, salt),
                    shared_seed=shared_seed,
                )


def _pairs(
    suite: Suite, case: Case, providers: list[ProviderSpec]
) -> Iterator[tuple[int, Prompt, int, ProviderSpec]]:
    """The (prompt, provider) pairs `case` runs, with their indexes, in the plan's order."""
    for pi, prompt in enumerate(suite.prompts):
        if not _applies(case.prompts, prompt.id, prompt.label):
            continue
        for ai, provider in enumerate(providers):
            if _applies(case.providers, provider.id, provider.label) and _applies(
                provider.prompts, prompt.id, prompt.label
            ):
                yield pi, prompt, ai, provider


def count_plan(
    suite: Suite,
    repeat: int,
    *,
    tags: list[str] | None = None,
    case_ids: list[str] | None = None,
    agents: list[str] | None = None,
    shard: tuple[int, int] | None = None,
    repeat_start: int = 0,
) -> int:
    """How many runs `build_plan` yields with the same arguments, counted without making
    them: a suite repeated a billion times is counted as quickly as one repeated once."""
    cases = select_cases(suite.cases, tags, case_ids)
    providers = [p for p in suite.providers if agents is None or p.label in agents]
    sizes = []  # (runs per repeat, repeats) of each case
    for case in cases:
        sizes.append((sum(1 for _ in _pairs(suite, case, providers)), case_repeat(case, repeat)))

    def positions_before(r: int) -> int:
        return sum(combos * min(repeats, r) for combos, repeats in sizes)

    first = positions_before(repeat_start)
    end = sum(combos * repeats for combos, repeats in sizes)
    if shard is None:
        return max(0, end - first)
    offset, every = shard[0] - 1, shard[1]

    def kept_below(position: int) -> int:
        return max(0, (position - offset + every - 1) // every)

    return max(0, kept_below(end) - kept_below(first))


def refuse_empty_plan(
    suite: Suite,
    repeat: int,
    *,
    tags: list[str] | None = None,
    case_ids: list[str] | None = None,
    agents: list[str] | None = None,
    shard: tuple[int, int] | None = None,
    tags_from: str = "--tag",
) -> None:
    """Raise SuiteError, naming the filter or section that emptied it, when the plan has no
    run: an evaluation without runs must not be stored as a passing one.

    `tags_from` says where `tags` came from (`--tag`, or an environment's `tags:`).
    """
    if repeat < 1:
        raise SuiteError(
            f"repeat is {repeat}: nothing would run", fix="repeat a case at least once (1 or more)"
        )
    plan = build_plan(suite, repeat, tags=tags, case_ids=case_ids, agents=agents, shard=shard)
    if next(plan, None) is not None:
        return
    labels = ", ".join(p.label for p in suite.providers)
    if agents is not None and not any(p.label in agents for p in suite.providers):
        raise SuiteError(
            f"--agent {', '.join(agents)} matches no provider of the suite",
            fix=f"name a provider label: {labels}",
        )
    ids = [c.id for c in suite.cases]
    known_tags = sorted({t for c in suite.cases for t in c.tags})
    if tags and not select_cases(suite.cases, tags, None):
        raise SuiteError(
            f"{tags_from} {', '.join(tags)} matches no case of the suite",
            fix=f"use a tag the cases have: {', '.join(known_tags[:20]) or '(no case has tags)'}",
        )
    if case_ids and not select_cases(suite.cases, None, case_ids):
        raise SuiteError(
            f"--case {', '.join(case_ids)} matches no case of the suite",
            fix=f"use a case id: {', '.join(ids[:20])}{' ...' if len(ids) > 20 else ''}",
        )
    if tags and case_ids and not select_cases(suite.cases, tags, case_ids):
        raise SuiteError(
            f"--case {', '.join(case_ids)} and {tags_from} {', '.join(tags)} together select "
            "no case: no selected case has a selected tag",
            fix="drop one of the two filters, or pick cases that have the tag",
        )
    if shard is not None:
        whole = sum(
            1 for _ in build_plan(suite, repeat, tags=tags, case_ids=case_ids, agents=agents)
        )
        raise SuiteError(
            f"--shard {shard[0]}/{shard[1]} selects no run: the plan has {whole} run(s)",
            fix=f"use at most {whole} shards",
        )
    raise SuiteError(
        "the suite plans no run: each test's providers: or prompts: filter excludes every "
        "provider or prompt",
        file=str(suite.path),
        fix="make each test's providers:/prompts: name a provider label or prompt of the suite",
    )


PROBABLE_TYPO_RUNS = 10_000_000
"""A plan of more runs than this is probably a typo (`repeat: 1000000000`): at a thousand
runs a second it would run for days."""


def plan_size_warning(planned: int, repeat: int) -> str | None:
    """A warning for a plan of more than PROBABLE_TYPO_RUNS runs, else None. Such a plan
    is not refused: it streams, so it starts at once and stops at Ctrl-C, resumable."""
    if planned <= PROBABLE_TYPO_RUNS:
        return None
    return (
        f"this evaluation plans {planned:,} runs (repeat {repeat:,}), which is probably a typo: "
        "it starts anyway (the plan streams); Ctrl-C stops it, `--resume` continues it, and "
        "--repeat sets the repeats"
    )
