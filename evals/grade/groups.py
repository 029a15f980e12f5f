"""Group assertions over whole groups of runs: which runs compare, and their verdicts.

`max-score` and `select-best` compare the outputs of one test: every prompt and agent of a
(case, repeat) form its group, ordered as promptfoo orders its columns (agent, then prompt).
A group is decided once its last run is done (graders/ranking.py gives the verdicts) and
its records are stored together in one transaction, so a store never holds part of a group:
a killed evaluation resumes by running the whole of every undecided group again.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable

from evals.common.blocking import run_to_completion
from evals.graders.registry import GROUP_TYPES
from evals.model.errors import SuiteError
from evals.model.plan import PlannedRun
from evals.model.results import RunKey, RunRecord
from evals.model.suite import Case, Suite

GroupKey = tuple[str, int]


def has_group_assertions(case: Case) -> bool:
    """True when the case has a max-score or select-best assertion."""
    return any(a.base_type in GROUP_TYPES for a in case.asserts)


def group_key(key: RunKey) -> GroupKey:
    """The group a run belongs to: its case and repeat."""
    return (key.case_id, key.repeat)


def refuse_shards(suite: Suite, shard: tuple[int, int] | None) -> None:
    """Raise when a sharded evaluation would split the groups of group assertions."""
    if shard is not None and any(has_group_assertions(case) for case in suite.cases):
        raise SuiteError(
            "max-score and select-best compare every output of a test, which --shard splits "
            "between processes",
            str(suite.path),
            fix="run suites with group assertions without --shard",
        )


async def decide_group(suite: Suite, records: list[RunRecord]) -> list[RunRecord]:
    """The group's records (same order) with the group verdicts merged into their grades.

    Error runs take no part; select-best is decided before max-score, which ignores it, as
    in promptfoo. Only the first assertion of each group type counts.
    """
    graded = sorted(
        (r for r in records if r.status != "error" and r.grade is not None),
        key=lambda r: (r.agent_index, r.prompt_index),
    )
    if not graded:
        return records
    # imported here: a suite without group assertions never loads the judges behind them
    from evals.graders.ranking import max_score, merge_group_verdict, select_best

    case = suite.cases[graded[0].case_index]
    grades = [r.grade for r in graded if r.grade is not None]
    for kind in ("select-best", "max-score"):
        assertion = next((a for a in case.asserts if a.type == kind), None)
        if assertion is None:
            continue
        if kind == "max-score":
            components = max_score(assertion, grades)
        else:
            first = graded[0]
            components = await select_best(
                assertion,
                case,
                [r.response.output or "" for r in graded],
                variables=first.vars,
                prompt=first.prompt,
                response=first.response,
                suite_root=suite.root,
                suite_config=suite.raw,
            )
        grades = [merge_group_verdict(g, c) for g, c in zip(grades, components, strict=True)]
    decided = {
        id(record): dataclasses.replace(
            record, grade=grade, status="pass" if grade.passed else "fail"
        )
        for record, grade in zip(graded, grades, strict=True)
    }
    return [decided.get(id(record), record) for record in records]


def decide_groups(suite: Suite, records: list[RunRecord]) -> list[RunRecord]:
    """Every record with its group's group verdicts (for records graded together)."""
    groups: dict[GroupKey, list[RunRecord]] = {}
    for record in records:
        if has_group_assertions(suite.cases[record.case_index]):
            groups.setdefault(group_key(record.key), []).append(record)
    decided: dict[int, RunRecord] = {}
    for members in groups.values():
        decided_members = run_to_completion(decide_group(suite, members))
        for before, after in zip(members, decided_members, strict=True):
            decided[id(before)] = after
    return [decided.get(id(record), record) for record in records]


class OutputGroups:
    """Holds the runs of group-assertion cases until their group is complete.

    Built from the runs planned in this process; a run of a case without group
    assertions is never held.
    """

    def __init__(self, suite: Suite, planned: Iterable[PlannedRun]) -> None:
        self.suite = suite
        self.expected: Counter[GroupKey] = Counter(
            group_key(run.key) for run in planned if has_group_assertions(run.case)
        )
        self.held: dict[GroupKey, list[RunRecord]] = {}

    def holds(self, record: RunRecord) -> bool:
        """True when the record's case compares outputs (it waits for its group)."""
        return group_key(record.key) in self.expected

    def add(self, record: RunRecord) -> list[RunRecord] | None:
        """Hold a run; when it completes its group, the whole group (released), else None."""
        key = group_key(record.key)
        members = self.held.setdefault(key, [])
        members.append(record)
        if len(members) < self.expected[key]:
            return None
        del self.held[key]
        return members

    async def decide(self, members: list[RunRecord]) -> list[RunRecord]:
        """A complete group with its group verdicts."""
        return await decide_group(self.suite, members)
