"""`evals triage list|add|annotate|labels|remove`: the triage log from the command line."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from evals.cli import options, values
from evals.model.errors import ExitCode

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals triage` and its five actions."""
    triage = commands.add_parser("triage", help="acknowledge, quarantine, accept: the triage log")
    actions = triage.add_subparsers(dest="action", required=True)
    listed = actions.add_parser("list", help="triage actions in force, newest first")
    options.suite_id(listed)
    listed.add_argument(
        "--all", action="store_true", help="the whole log: removed and expired actions too"
    )
    options.store(listed)
    listed.set_defaults(handler=_list)
    added = actions.add_parser("add", help="record a triage action")
    added.add_argument("kind", choices=["acknowledge", "quarantine", "accept-disagreement"])
    options.suite_id(added, help="suite id", required=True)
    added.add_argument("--case", help="case id (a quarantine needs one)")
    options.env(added, help="default: every one")
    added.add_argument("--until", help="a quarantine's expiry: 7d, 12h, 2026-12-24, ISO time")
    added.add_argument("--evaluation", help="the evaluation it concerns")
    added.add_argument("--gate", help="the gate it concerns (acknowledge)")
    added.add_argument("--reason", required=True, help="why (stored and shown)")
    added.add_argument("--link", help="an https:// link: the issue, the fix")
    options.actor(added)
    options.store(added)
    added.set_defaults(handler=_add)
    labelled = actions.add_parser(
        "labels",
        help="people's verdicts on runs (overrides, thumbs) as a file for `evals calibrate`",
    )
    options.suite_id(labelled, help="suite id", required=True)
    labelled.add_argument(
        "--assertion",
        default="llm-rubric",
        help="the judge's assertion type, taken from each run's grade (default llm-rubric)",
    )
    labelled.add_argument("-o", "--output", required=True, help="the .jsonl file to write")
    options.store(labelled)
    labelled.set_defaults(handler=_labels)
    annotated = actions.add_parser(
        "annotate",
        help="a person's verdict override, thumb or comment on one stored run (no gate reads it)",
    )
    annotated.add_argument("kind", choices=["override", "rate", "comment"])
    annotated.add_argument("--evaluation", required=True, help="the run's evaluation id")
    annotated.add_argument("--case", required=True, help="the run's case id")
    annotated.add_argument("--agent", required=True, help="the run's agent label")
    annotated.add_argument(
        "--repeat",
        type=values.positive,
        default=1,
        help="the run's repeat, counted from 1 as the reports count them (default 1)",
    )
    annotated.add_argument("--prompt", help="the run's prompt id (default: the run's only one)")
    annotated.add_argument(
        "--label", help="override: pass or fail; rate: up or down; comment: none"
    )
    annotated.add_argument(
        "--reason", default="", help="why (an override and a comment need one; shown)"
    )
    options.actor(annotated)
    options.store(annotated)
    annotated.set_defaults(handler=_annotate)
    removed = actions.add_parser("remove", help="withdraw an action (recorded, not deleted)")
    removed.add_argument("id", type=int, help="the action's id (`evals triage list`)")
    removed.add_argument("--reason", required=True, help="why")
    options.actor(removed)
    options.store(removed)
    removed.set_defaults(handler=_remove)


def _list(args: argparse.Namespace) -> int:
    """`evals triage list`: the actions in force (or the whole log), newest first."""
    from evals.team import triage

    now = time.time()
    triage.print_actions(triage.listing(args.store, args.suite, args.all, now), now)
    return int(ExitCode.OK)


def _add(args: argparse.Namespace) -> int:
    """`evals triage add`: one acknowledgement, quarantine or accepted disagreement."""
    from evals.team import triage

    now = time.time()
    action = triage.new_action(
        args.kind.replace("-", "_"),
        args.suite,
        options.actor_of(args),
        args.reason,
        now=now,
        case_id=args.case,
        environment=args.env,
        evaluation_id=args.evaluation,
        gate=args.gate,
        until=triage.parse_until(args.until, now) if args.until else None,
        link=args.link,
    )
    with triage.opened(args.store) as store:
        stored = triage.record(store, action)
    triage.print_actions([stored], now)
    return int(ExitCode.OK)


def _labels(args: argparse.Namespace) -> int:
    """`evals triage labels`: people's verdicts on runs written as a calibration file."""
    from evals.team import triage
    from evals.team.labels import human_labels, write_labels

    with triage.opened(args.store) as store:
        labels = human_labels(store, args.suite, args.assertion)
    write_labels(Path(args.output), labels)
    print(f"wrote {len(labels.items)} labelled output(s) to {args.output}")
    for why in labels.left_out:
        print(f"left out: {why}")
    return int(ExitCode.OK)


def _annotate(args: argparse.Namespace) -> int:
    """`evals triage annotate`: a person's override, thumb or comment on one stored run."""
    from evals.team import triage

    now = time.time()
    with triage.opened(args.store) as store:
        stored = triage.annotate_run(
            store,
            args.kind,
            options.actor_of(args),
            args.reason,
            now=now,
            evaluation_id=args.evaluation,
            case_id=args.case,
            agent=args.agent,
            repeat=args.repeat - 1,
            prompt_id=args.prompt,
            label=args.label,
        )
    triage.print_actions([stored], now)
    return int(ExitCode.OK)


def _remove(args: argparse.Namespace) -> int:
    """`evals triage remove`: an action withdrawn (recorded, not deleted)."""
    from evals.team import triage

    with triage.opened(args.store) as store:
        removal = triage.withdraw(store, args.id, options.actor_of(args), args.reason)
    print(f"removed triage action {args.id} (recorded as {removal.id})")
    return int(ExitCode.OK)
