"""The `evals` command: parses arguments and calls library functions, nothing more.

Exit codes (docs/cli.md): 0 the build passed (every gate passed, or the verdict is
undetermined and the environment warns on it); 1 a gate failed, or the verdict is
undetermined where the environment fails on it; 2 invalid suite or usage; 3 harness
fault; 130 interrupted (Ctrl-C, SIGTERM or SIGHUP).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import getpass
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evals import __version__
from evals.common.collector import collect_rarely
from evals.common.extras import require_extra
from evals.common.interrupts import exit_at_next_stop, stop_signals_as_interrupt
from evals.model.errors import ExitCode, HarnessFault, SuiteError
from evals.reports.formats import output_help

if TYPE_CHECKING:
    from evals.model.ci import CiOutcome
    from evals.model.evaluation import EvaluationResult
    from evals.model.options import RunOptions
    from evals.model.protocols import ReportSink, StoreSink
    from evals.model.suite import Suite
    from evals.pipeline.reuse import Prepared
    from evals.reports.closing import Closing
    from evals.reports.json_stream import ReportProcess
    from evals.store.process import StoreProcess

Command = Callable[[argparse.Namespace], int]
# The store's id columns hold 64 characters.
MAX_EVALUATION_ID = 64


def _shard(text: str) -> tuple[int, int]:
    try:
        index, total = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError("use i/n, for example 2/3") from None
    if not 1 <= index <= total:
        raise argparse.ArgumentTypeError("shard index must be between 1 and the shard count")
    return index, total


def _stages(text: str) -> tuple[int, ...]:
    from evals.pipeline.staged import parse_stages

    try:
        return parse_stages(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_executor(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="where runs execute: this process (default) or a Ray cluster's workers",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="Ray cluster: auto, ray://HOST:10001 (default: a local Ray instance)",
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="hand the environment variable NAME to the Ray workers (repeatable; with the "
        "suite's pass_env:); its value is never stored or logged",
    )


def _whole(text: str, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number is needed, not {text!r}") from None
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" and at most {maximum}" if maximum is not None else ""
        raise argparse.ArgumentTypeError(f"must be at least {minimum}{upper}, got {value}")
    return value


def _positive(text: str) -> int:
    """A whole number of at least 1 (repeats, runs in flight, evaluations to keep)."""
    return _whole(text, 1)


def _non_negative(text: str) -> int:
    """A whole number of at least 0 (how many evaluations to list)."""
    return _whole(text, 0)


def _port(text: str) -> int:
    """A TCP port to listen on, 1 to 65535."""
    return _whole(text, 1, 65535)


def _seconds(text: str) -> float:
    """A duration in seconds: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of seconds is needed, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds above 0, for example 30, got {text!r}"
        )
    return value


def _evaluation_id(text: str) -> str:
    """An evaluation id: 1 to 64 printable characters, no spaces at either end."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an evaluation id cannot be empty; use for example nightly-42"
        )
    if len(text) > MAX_EVALUATION_ID:
        raise argparse.ArgumentTypeError(
            f"an evaluation id has at most {MAX_EVALUATION_ID} characters, this one has {len(text)}"
        )
    if not text.isprintable() or text != text.strip():
        raise argparse.ArgumentTypeError(
            f"an evaluation id is printable characters without spaces at either end, not "
            f"{text!r}; use for example nightly-42"
        )
    return text


def _add_outputs(parser: argparse.ArgumentParser) -> None:
    from evals.model.defaults import DEFAULT_HTML_RUN_DETAILS

    parser.add_argument("-o", "--output", action="append", metavar="FILE", help=output_help())
    parser.add_argument(
        "--html-run-details",
        type=_positive,
        metavar="N",
        help="the most runs the HTML report details; past it, the runs that did not pass "
        f"(default: the suite's reports.html_run_details, else {DEFAULT_HTML_RUN_DETAILS})",
    )


def _add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="URL",
        help="results store (default: $EVALS_STORE_URL or sqlite:///.evals/results.db); "
        "postgresql+psycopg://... for teams",
    )


def _streamed_reports(outputs: Sequence[str] | None) -> list[Path]:
    """The `-o` files written while the evaluation runs: promptfoo's JSON report."""
    from evals.reports.writers import find_format

    return [Path(out) for out in outputs or [] if getattr(find_format(out), "streamed", False)]


def _report_settings(suite: Suite, args: argparse.Namespace) -> None:
    """The suite's `reports:` settings with the command line's over them."""
    given = {
        name: value
        for name in ("html_run_details", "runs_in_memory")
        if (value := getattr(args, name, None)) is not None
    }
    if given:
        from dataclasses import replace

        suite.reports = replace(suite.reports, **given)


def _listing_reports(outputs: Sequence[str] | None) -> bool:
    """True when a report of `outputs` other than the streamed JSON lists every run."""
    return len(outputs or []) > len(_streamed_reports(outputs))


def cmd_run(args: argparse.Namespace) -> int:
    """Run a suite, write reports, print the verdict, and exit by the gates."""
    store_process = report_process = None
    _check_run_options(args)
    # A shard of an adaptive run reports the whole run, written once its last look is decided.
    streams = not (args.adaptive and args.shard) and bool(_streamed_reports(args.output))
    if not args.no_store:
        from evals.store.location import check_store_settings
        from evals.store.process import StoreProcess

        check_store_settings(args.store)
        # Started first, before this process imports what the suite and the reports need:
        # it starts up and opens the store on the other core meanwhile, and writes the JSON report
        # too when there is one.
        module = "evals.store.process"
        if streams:
            from evals.reports import STORE_WITH_REPORT as module
        store_process = StoreProcess(args.store, module=module)
    try:
        args.output = _check_outputs(args.output)
        if streams:
            from evals.reports.json_stream import ReportProcess

            report_process = ReportProcess(_streamed_reports(args.output), store_process)
        return _run(args, store_process, report_process)
    finally:
        for process in (report_process, store_process):
            if process is not None:
                process.close()


def _print_load_warnings(suite: Suite) -> None:
    """What `evals run` says once about a suite before running it (`evals validate` says
    it too, with its lint)."""
    from evals.suite.costs import unpriced_agents

    for warning in [*suite.notices, *suite.warnings, *unpriced_agents(suite)]:
        print(f"warning: {warning}", file=sys.stderr)


def _check_run_options(args: argparse.Namespace) -> None:
    """Refuse contradictory options of `evals run` before anything starts."""
    if args.resume and args.no_store:
        raise SuiteError(
            "--resume continues an evaluation from the store, and --no-store turns it off",
            fix="drop --no-store to resume, or drop --resume to run without a store",
        )
    _check_ray_address(args)


def _check_ray_address(args: argparse.Namespace) -> None:
    """--ray-address only means something with --executor ray."""
    if args.ray_address and args.executor != "ray":
        raise SuiteError(
            "--ray-address names a Ray cluster, but runs execute in this process",
            fix="add --executor ray, or drop --ray-address",
        )


def _run(
    args: argparse.Namespace,
    store_process: StoreProcess | None,
    report_process: ReportProcess | None,
) -> int:
    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import run_evaluation
    from evals.suite import load_suite

    suite = load_suite(args.suite)
    _print_load_warnings(suite)
    _report_settings(suite, args)
    options = RunOptions(
        repeat=args.repeat,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        tags=args.tag or None,
        case_ids=args.case or None,
        agents=args.agent or None,
        environment=args.env,
        store_url=args.store,
        use_store=not args.no_store,
        # reports read every run back from the store; without one, the runs are kept, and
        # a small evaluation's too (each report reads them once, not from the store again)
        keep_records=args.no_store and _listing_reports(args.output),
        keep_records_below=suite.reports.runs_in_memory if _listing_reports(args.output) else 0,
        resume=args.resume,
        shard=args.shard,
        progress=not args.quiet and not args.no_progress,
        evaluation_id=args.evaluation_id,
        grader=args.grader,
        trace=args.trace,
        seed=args.seed,
        executor=args.executor,
        ray_address=args.ray_address,
        pass_env=args.pass_env or None,
        cache=bool(args.cache),
        cache_path=args.cache if isinstance(args.cache, str) else None,
        store_process=store_process,
        report_process=report_process,
        look=args.look,
    )
    if args.until_decided and args.adaptive:
        raise SuiteError(
            "--until-decided and --adaptive are two designs of looks",
            fix="choose one: --adaptive looks after every batch and runs only open cases",
        )
    with contextlib.ExitStack() as stack:
        reused = None
        if not args.fresh_baseline:
            from evals.pipeline.reuse import reused_baseline

            most = args.adaptive or (args.until_decided[-1] if args.until_decided else None)
            reused = stack.enter_context(
                reused_baseline(suite, options, most, asked=args.reuse_baseline)
            )
            if reused.note and reused.reuse is None and not args.quiet:
                print(reused.note, file=sys.stderr)
            options = reused.options
        if args.adaptive:
            return _run_adaptive(suite, options, args, report_process, reused)
        if args.until_decided:
            return _run_staged(suite, options, args, reused)
        result = run_evaluation(suite, options)
        return _finish(
            result,
            args,
            report_process,
            store_process,
            store=_run_store(args),
            preface=_reuse_settled(result, reused),
        )


def _reuse_settled(
    result: EvaluationResult, reused: Prepared | None, repeats: int | None = None
) -> str | None:
    """The stored baseline's part in `result` (its gates' report says it too), in words,
    against `repeats` repeats (else the run's) of every agent run fresh; None when no
    stored baseline was looked for."""
    if reused is None or reused.reuse is None:
        return None
    from evals.analysis.cells import run_facts

    reuse = reused.settled(run_facts(result).cache_hits, repeats or result.repeat)
    result.gates.reuse = reuse
    if reuse is None:
        return None
    return "\n".join(line for line in (reuse.headline(), reuse.calls_line()) if line)


def _run_store(args: argparse.Namespace) -> str | None:
    """`_finish`'s `store` for `evals run`: its `--store`, or no store with `--no-store`."""
    return _NOT_STORED if args.no_store else args.store


def _run_adaptive(
    suite: Suite,
    options: RunOptions,
    args: argparse.Namespace,
    report_process: ReportProcess | None,
    reused: Prepared | None = None,
) -> int:
    """`run --adaptive`: look after every batch, run only cases that can still decide;
    with a stored baseline standing in, the candidate's repeats of each case follow the
    baseline's history (`evals.gates.baseline.allocation`)."""
    from evals.pipeline.adaptive import design_for, run_adaptive

    config = suite.gates.for_environment(options.environment)
    design = design_for(
        config, args.adaptive, args.look_every, args.pass_reach, args.budget_runs, args.budget_cost
    )
    if reused is not None and reused.reuse is not None and not reused.reuse.fell_back:
        from dataclasses import replace

        from evals.gates.baseline import allocation

        planned = allocation(reused.history, design.last, maximum=design.last)
        options = replace(options, allocation={c: n / design.last for c, n in planned.items()})
    adaptive = run_adaptive(suite, options, design, args.shard_wait)
    settled = _reuse_settled(adaptive.result, reused, design.last)
    return _finish(
        adaptive.result,
        args,
        report_process,
        options.store_process,
        store=_run_store(args),
        preface="\n".join(p for p in (settled, adaptive.describe()) if p),
    )


def _run_staged(
    suite: Suite, options: RunOptions, args: argparse.Namespace, reused: Prepared | None = None
) -> int:
    """`run --until-decided`: add stages of repeats until the gates are decided."""
    from evals.pipeline.staged import run_until_decided

    staged = run_until_decided(suite, options, args.until_decided)
    settled = _reuse_settled(staged.result, reused, args.until_decided[-1])
    return _finish(
        staged.result,
        args,
        options.report_process,
        options.store_process,
        store=_run_store(args),
        preface="\n".join(p for p in (settled, staged.describe()) if p),
    )


def cmd_plan(args: argparse.Namespace) -> int:
    """Print how likely the regression gate is to find a drop, and what a target needs."""
    from evals.analysis.power import (
        build_power_plan,
        existing_store_url,
        latest_estimate,
        render_power_plan,
    )
    from evals.gates.catalog import planned_gate_count
    from evals.suite import load_suite

    suite = load_suite(args.suite)
    store_url = existing_store_url(args.store)
    estimate = latest_estimate(store_url, suite) if store_url else None
    try:
        plan = build_power_plan(
            suite,
            gates=planned_gate_count(suite, args.env),
            environment=args.env,
            cases=args.cases,
            repeats=args.repeats,
            effect=args.effect,
            pass_rate=args.baseline_rate,
            icc=args.icc,
            tolerance=args.tolerance,
            power=args.power,
            estimate=estimate,
        )
    except ValueError as exc:
        raise SuiteError(str(exc), fix="see `evals plan --help` for each option's range") from None
    render_power_plan(plan)
    from evals.gates.feasibility import undecidable

    config = suite.gates.for_environment(args.env)
    for item in undecidable(suite, args.env):
        print(f"cannot decide: {item.sentence(config.on_undetermined or 'warn')}")
    return int(ExitCode.OK)


def _check_outputs(outputs: Sequence[str] | None) -> list[str]:
    """The `-o` files as absolute paths, each checked writable before any run, not after
    (an unknown format, a directory, a path under a file are exit 2)."""
    if not outputs:
        return []
    from evals.reports.writers import checked_report_path

    return [str(checked_report_path(out)) for out in outputs]


def _finish(
    result: EvaluationResult,
    args: argparse.Namespace,
    report_process: ReportSink | None = None,
    store_process: StoreSink | None = None,
    *,
    store: str | None = None,
    stored: bool = True,
    preface: str | None = None,
) -> int:
    """Write the reports (a report process finishes the JSON report it streamed, alongside
    the other reports and the terminal summary), print the summary and its last block, and
    return the exit code. `store` is the `--store` value the evaluation was stored with
    (None: $EVALS_STORE_URL or the default; `_NOT_STORED`: no store at all), or with
    `stored` false the store the compared evaluations came from; `preface` goes just
    before the last block. The store process is let go once the report is written: it
    closes the database while this process frees the evaluation's objects on its way
    out."""
    streamed = []
    if report_process is not None:  # written by its process while this one goes on
        report_process.send_finish(result)
        streamed = _streamed_reports(args.output)
    # imported once the report process has its work: rich's import is part of the wait
    from evals.reports import write_report
    from evals.reports.terminal import render_body, render_closing, summary_console

    _report_settings(result.suite, args)
    for out in args.output or []:
        if Path(out) not in streamed:
            write_report(Path(out), result)
    console = summary_console()
    if not args.quiet:
        render_body(result, console)
    if report_process is not None:
        report_process.await_finish()
    if store_process is not None:  # nothing more to store
        store_process.release()
    if stored and store != _NOT_STORED:
        from evals.ci.nightly import stored_nightly_baseline

        baseline = stored_nightly_baseline(result, store)
        preface = "\n".join(p for p in (preface, baseline) if p) or None
    for out in args.output or []:
        print(f"wrote {out}", file=sys.stderr)
    if getattr(args, "cache", False):
        from evals.analysis.cells import run_facts
        from evals.run.cache import describe_hits

        print(describe_hits(run_facts(result).cache_hits), file=sys.stderr)
    sys.stderr.flush()
    if not args.quiet:
        render_closing(result, console, _closing(result, store, stored, preface))
    elif preface:
        print(preface)
    from evals.pipeline.verdict import exit_code

    return exit_code(result)


_NOT_STORED = "\0"
"""`_finish`'s `store` when the evaluation went to no store (`--no-store`, a report file)."""


def _closing(
    result: EvaluationResult, store: str | None, stored: bool, preface: str | None
) -> Closing:
    """The last block's facts: the store (the `--store` value, else $EVALS_STORE_URL or
    the default), how to name it again, and promptfoo's rule for a suite without gates."""
    from evals.pipeline.verdict import rule_sentence
    from evals.reports.closing import Closing
    from evals.store.location import display_location, without_password

    rule = rule_sentence(result)
    if store == _NOT_STORED:
        return Closing(rule=rule, preface=preface)
    return Closing(
        store=display_location(store),
        stored=stored,
        store_option=without_password(store) if store else None,
        rule=rule,
        preface=preface,
    )


def cmd_compat_check(args: argparse.Namespace) -> int:
    """Run promptfoo and evals on every promptfoo config found; exit 1 when a row differs."""
    from evals.compat.promptfoo_check import check

    env = {}
    for pair in args.env or []:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SuiteError(f"--env takes NAME=VALUE, got {pair!r}", fix="write --env KEY=value")
        env[name] = value
    cli = Path(args.promptfoo or os.environ.get("EVALS_PROMPTFOO") or "promptfoo")
    data = check(
        [Path(p) for p in args.paths],
        cli=cli,
        goldens=Path(args.goldens) if args.goldens else None,
        refresh=args.refresh,
        env=env,
        verbose=args.verbose,
    )
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return int(ExitCode.OK) if data["agreeing"] == data["rows"] else 1


def cmd_plugins(args: argparse.Namespace) -> int:
    """List what installed plugins add, group by group, importing each entry point: exit 2
    when one cannot be used (the error names it and its distribution)."""
    from evals.common import plugins

    broken = 0
    for group, what in plugins.GROUPS.items():
        print(f"{group}: {what}")
        names = plugins.names(group)
        for name in names:
            try:
                plugin = plugins.find(group, name)
                assert plugin is not None
                plugins.load(plugin)
                print(f"  {name} = {plugin.value} ({plugin.distribution})")
            except plugins.PluginError as exc:
                broken += 1
                print(f"  {name}: {exc.message}")
        if not names:
            print("  none installed" if not plugins.disabled() else "  plugins are disabled")
    return int(ExitCode.INVALID_INPUT) if broken else int(ExitCode.OK)


def cmd_validate(args: argparse.Namespace) -> int:
    """Load a suite and report problems without running anything; exit 2 when the suite
    has problems promptfoo would turn into error rows (`Suite.notices`).

    `--json` prints the suite's identity instead: its outline (with the suite and case
    fingerprints) and each agent's fingerprint.
    """
    from evals.gates.feasibility import undecidable_gates
    from evals.suite import load_suite

    suite = load_suite(args.suite)
    from evals.plan.runs import count_plan, plan_size_warning
    from evals.suite.costs import unpriced_agents
    from evals.suite.lint import lint_suite

    repeat = suite.evaluate_options.repeat
    too_big = plan_size_warning(count_plan(suite, repeat), repeat)
    warnings = [
        *suite.warnings,
        *lint_suite(suite),
        *undecidable_gates(suite),
        *unpriced_agents(suite),
        *([too_big] if too_big else []),
    ]
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if suite.notices:
        for notice in suite.notices:
            print(f"error: {notice}", file=sys.stderr)
        print(
            f"{suite.path}: {len(suite.notices)} problem(s): `evals run` runs the suite and makes "
            "each run they touch an error row (or a failed check), as promptfoo does",
            file=sys.stderr,
        )
        return int(ExitCode.INVALID_INPUT)
    if args.json:
        import orjson

        document = {
            "outline": suite.outline().to_dict(),
            "agent_fingerprints": suite.agent_fingerprints,
        }
        print(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
        return int(ExitCode.OK)
    agents = ", ".join(f"{label} ({fp})" for label, fp in suite.agent_fingerprints.items())
    print(
        f"{suite.path}: ok — {len(suite.cases)} cases, {len(suite.prompts)} prompt(s), "
        f"agents: {agents}, suite fingerprint {suite.fingerprint}"
    )
    return int(ExitCode.OK)


def cmd_baseline(args: argparse.Namespace) -> int:
    """`evals baseline show|accept`: which evaluation is the baseline and why; accept one."""
    from evals.team import baselines, triage

    with triage.opened(args.store) as store:
        if args.action == "show":
            for current in baselines.current_baselines(store, args.suite, args.branch):
                print("\n".join(baselines.describe(current)))
            return int(ExitCode.OK)
        actor = args.by or os.environ.get("EVALS_TRIAGE_ACTOR") or getpass.getuser()
        action = baselines.accept_baseline(store, args.id, actor, args.reason, time.time())
    print(
        f"{args.id} is the baseline of {action.suite_id}, accepted by {actor} (action {action.id})"
    )
    return int(ExitCode.OK)


def cmd_history(args: argparse.Namespace) -> int:
    """List stored evaluations, newest first."""
    from evals.pipeline.history import print_history

    print_history(args.store, suite_id=args.suite, environment=args.env, limit=args.limit)
    return int(ExitCode.OK)


def cmd_triage(args: argparse.Namespace) -> int:
    """`evals triage list|add|annotate|labels|remove`: the triage log from the command line."""
    from evals.team import triage

    now = time.time()
    if args.action == "list":
        triage.print_actions(triage.listing(args.store, args.suite, args.all, now), now)
        return int(ExitCode.OK)
    if args.action == "labels":
        from evals.team.labels import human_labels, write_labels

        with triage.opened(args.store) as store:
            labels = human_labels(store, args.suite, args.assertion)
        write_labels(Path(args.output), labels)
        print(f"wrote {len(labels.items)} labelled output(s) to {args.output}")
        for why in labels.left_out:
            print(f"left out: {why}")
        return int(ExitCode.OK)
    actor = args.by or os.environ.get("EVALS_TRIAGE_ACTOR") or getpass.getuser()
    if args.action == "remove":
        with triage.opened(args.store) as store:
            removal = triage.withdraw(store, args.id, actor, args.reason)
        print(f"removed triage action {args.id} (recorded as {removal.id})")
        return int(ExitCode.OK)
    if args.action == "annotate":
        with triage.opened(args.store) as store:
            stored = triage.annotate_run(
                store,
                args.kind,
                actor,
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
    action = triage.new_action(
        args.kind.replace("-", "_"),
        args.suite,
        actor,
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


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare two stored evaluations (baseline then candidate) and gate the candidate."""
    from evals.pipeline.history import compare_stored

    args.output = _check_outputs(args.output)
    result = compare_stored(
        args.store,
        baseline_id=args.baseline,
        candidate_id=args.candidate,
        suite=args.suite,
        baseline_agent=args.baseline_agent,
        candidate_agent=args.candidate_agent,
        environment=args.env,
        allow_fingerprint_mismatch=args.allow_fingerprint_mismatch,
        baseline_branch=args.baseline_branch,
    )
    return _finish(result, args, store=args.store, stored=False)


def cmd_merge(args: argparse.Namespace) -> int:
    """Merge shard stores or shard `.json` reports into one evaluation; store it, gate it.

    An incomplete merge (shards missing) is stored and reported as incomplete, says so on
    stderr even with --quiet, and exits 3 whatever the gates say.
    """
    from evals.pipeline.merge import merge_shards
    from evals.reports.writers import is_report_path

    to_report = is_report_path(args.out)
    args.output = _check_outputs([args.out, *(args.output or [])] if to_report else args.output)
    if not to_report:
        from evals.store.location import check_store_settings

        check_store_settings(args.out, option="OUT")
    with contextlib.ExitStack() as stack:
        store_url = args.out
        if to_report:  # the merged runs wait in a store of their own for the reports
            import tempfile

            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evals-merge-")))
            store_url = f"sqlite:///{folder / 'merged.db'}"
        merged = merge_shards(
            args.shards,
            store_url=store_url,
            suite_path=args.suite,
            evaluation_id=args.evaluation_id,
        )
        result = merged.result
        if not to_report:
            print(
                f"stored evaluation {result.meta.id} ({result.meta.status}) in {args.out}",
                file=sys.stderr,
            )
            if merged.replaced:
                print(merged.replaced, file=sys.stderr)
        code = _finish(result, args, store=_NOT_STORED if to_report else args.out)
    if result.meta.status == "incomplete":
        for warning in result.gates.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        return int(ExitCode.HARNESS_FAULT)
    return code


def cmd_regrade(args: argparse.Namespace) -> int:
    """Grade a stored evaluation's responses again with the suite's current assertions."""
    from evals.pipeline.regrade import regrade

    args.output = _check_outputs(args.output)
    result = regrade(args.store, args.evaluation, args.suite)
    print(f"stored evaluation {result.meta.id} (regraded {args.evaluation})", file=sys.stderr)
    return _finish(result, args, store=args.store)


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Measure a judge against human labels; fail when agreement is below the minimums."""
    from evals.analysis.agreement import below_minimum, render_table
    from evals.pipeline.calibration import calibrate

    calibration, rows = calibrate(Path(args.file), args.grader, args.concurrency)
    print(render_table(rows))
    min_kappa = calibration.min_kappa if args.min_kappa is None else args.min_kappa
    min_accuracy = calibration.min_accuracy if args.min_accuracy is None else args.min_accuracy
    problems = below_minimum(rows[-1], min_kappa, min_accuracy)
    for problem in problems:
        print(f"judge below minimum: {problem}", file=sys.stderr)
    return int(ExitCode.GATE_FAILED if problems else ExitCode.OK)


def cmd_ci_pr(args: argparse.Namespace) -> int:
    """The pull-request job: main's agent against the pull request's, gated and reported."""
    from evals.ci.pr import PrOptions, run_pull_request

    outcome = run_pull_request(
        PrOptions(
            suite=Path(args.suite),
            out=Path(args.out),
            store=args.store,
            base=args.base,
            agents=args.agent,
            repeat=args.repeat,
            effect=args.effect,
            max_repeats=args.max_repeats,
            stages=args.until_decided,
            adaptive=args.adaptive,
            look_every=args.look_every,
            pass_reach=args.pass_reach,
            budget_runs=args.budget_runs,
            budget_cost=args.budget_cost,
            resume=args.resume,
            seed=args.seed,
            evaluation_id=args.evaluation_id,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            nightly_branch=args.nightly_branch,
            report_url=args.report_url,
            env_cache=Path(args.env_cache) if args.env_cache else None,
            fresh_baseline=args.fresh_baseline,
        )
    )
    return _ci_finish(outcome, Path(args.out), args.quiet)


def cmd_ci_nightly(args: argparse.Namespace) -> int:
    """The nightly job: run or merge the suite, store the baseline, compare with last night."""
    from evals.ci.nightly import NightlyOptions, run_nightly

    _check_ray_address(args)
    outcome = run_nightly(
        NightlyOptions(
            suite=Path(args.suite),
            store=args.store,
            shards=args.shards,
            out=Path(args.out),
            keep=args.keep,
            evaluation_id=args.evaluation_id,
            repeat=args.repeat,
            seed=args.seed,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            executor=args.executor,
            ray_address=args.ray_address,
            pass_env=args.pass_env or None,
        )
    )
    return _ci_finish(outcome, Path(args.out), args.quiet)


def _ci_finish(outcome: CiOutcome, out: Path, quiet: bool) -> int:
    if not quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    print(f"evals ci {outcome.kind}: {outcome.verdict}; reports in {out}", file=sys.stderr)
    return outcome.exit_code


def cmd_store_prune(args: argparse.Namespace) -> int:
    """Delete all but the newest evaluations of each suite (and compact a SQLite file)."""
    from evals.store import open_store

    store = open_store(args.store)
    try:
        deleted = store.prune(args.keep)
    finally:
        store.close()
    print(f"pruned {len(deleted)} evaluation(s), kept the newest {args.keep} per suite")
    return int(ExitCode.OK)


def cmd_store_check(args: argparse.Namespace) -> int:
    """Check that a store is whole and readable, changing nothing: exit 0 when it is,
    1 when it is not (a CI job then falls back to an older store)."""
    from evals.store.integrity import check_store

    checked = check_store(args.store)
    print(f"{'ok' if checked.ok else 'unusable'}: {checked.detail}")
    return int(ExitCode.OK if checked.ok else ExitCode.GATE_FAILED)


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Launch the Streamlit dashboard over the store (read-only, localhost by default).

    A non-loopback --host needs OpenID Connect login configured, or --insecure-no-auth.

    Streamlit replaces this process, so a signal that stops `evals dashboard` stops the
    server itself and no orphan keeps the port.
    """
    require_extra("dashboard", "evals dashboard")
    from evals.store.location import check_store_settings
    from evals.team.serving import STREAMLIT_OPTIONS, launch

    check_store_settings(args.store)

    extra, settings = launch(args.host, args.insecure_no_auth, os.environ, Path.cwd(), Path.home())
    app = Path(__file__).resolve().parent / "dashboard" / "app.py"
    env = {**os.environ, **settings}
    if args.store:
        env["EVALS_STORE_URL"] = args.store
    command = [
        sys.executable,
        "-m",
        "evals.dashboard.server",
        "run",
        str(app),
        "--server.address",
        args.host,
        "--server.port",
        str(args.port),
        *STREAMLIT_OPTIONS,
        *extra,
    ]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, env)


def _add_adaptive(parser: argparse.ArgumentParser) -> None:
    """--adaptive and its looks, futility and caps (`evals run` and `evals ci pr`)."""
    parser.add_argument(
        "--adaptive",
        nargs="?",
        const=10,
        type=_positive,
        metavar="MAX",
        help="look after every batch of repeats (up to MAX per case, default 10), stop once "
        "the gates are decided and run only cases an undetermined gate reads",
    )
    parser.add_argument(
        "--look-every",
        type=_positive,
        default=2,
        metavar="N",
        help="with --adaptive: repeats per case between looks (default 2; the first look is "
        "after N repeats)",
    )
    parser.add_argument(
        "--pass-reach",
        type=float,
        metavar="R",
        help="with --adaptive: stop running for a gate once a pass lies more than R "
        "conditional standard deviations away by the last look (default: the futility reach, "
        "2); 0 saves calls by giving up passes that need a favourable run of data; a gate "
        "still stops only when failing lies beyond the futility reach",
    )
    parser.add_argument(
        "--budget-runs",
        type=_positive,
        metavar="N",
        help="with --adaptive: never start a look that would take the runs past N "
        "(default: the environment's gates.budget_runs)",
    )
    parser.add_argument(
        "--budget-cost",
        type=float,
        metavar="AMOUNT",
        help="with --adaptive: never start a look whose projected cost would pass AMOUNT "
        "(default: the environment's gates.budget_cost)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    from evals.model.defaults import DEFAULT_STAGES

    parser = argparse.ArgumentParser(
        prog="evals",
        description="Regression harness for tool-using LLM agents.",
    )
    parser.add_argument("--version", action="version", version=f"evals {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a suite against its agents and gate the result")
    run.add_argument("suite", help="suite YAML file or a directory holding promptfooconfig.yaml")
    _add_outputs(run)
    run.add_argument(
        "--repeat", "-r", type=_positive, help="runs per (case, agent); default from the suite"
    )
    run.add_argument("--concurrency", "-j", type=_positive, help="runs in flight at once")
    run.add_argument("--timeout", type=_seconds, metavar="SECONDS", help="per-run timeout")
    run.add_argument("--env", choices=["pr", "nightly", "release"], help="gate environment")
    run.add_argument("--tag", "-t", action="append", help="only cases with this tag (repeatable)")
    run.add_argument("--case", action="append", help="only this case id (repeatable)")
    run.add_argument("--agent", action="append", help="only this agent label (repeatable)")
    run.add_argument(
        "--resume",
        nargs="?",
        const=True,
        type=_evaluation_id,
        metavar="EVALUATION_ID",
        help="continue an interrupted evaluation (latest one of this suite by default)",
    )
    run.add_argument("--shard", type=_shard, metavar="I/N", help="run only shard I of N")
    run.add_argument(
        "--shard-wait",
        type=_seconds,
        default=600.0,
        metavar="S",
        help="with --adaptive and --shard: how long a look waits for the other shards' runs "
        "in the shared store before it fails (default 600)",
    )
    run.add_argument(
        "--until-decided",
        nargs="?",
        const=DEFAULT_STAGES,
        type=_stages,
        metavar="STAGES",
        help="run in stages of cumulative repeats (default 5,10,20) and stop once the gates "
        "are decided; each look spends its share of the build's false-failure budget",
    )
    _add_adaptive(run)
    run.add_argument(
        "--look",
        type=_positive,
        help=argparse.SUPPRESS,  # the look of an adaptive comparison, recorded on each run
    )
    run.add_argument(
        "--evaluation-id",
        type=_evaluation_id,
        help="id for the new evaluation, 1 to 64 printable characters (shards share one)",
    )
    run.add_argument(
        "--trace",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="record an OpenTelemetry trace per run (default: on for out-of-process agents)",
    )
    run.add_argument(
        "--seed",
        type=int,
        default=0,
        help="mixed into every run's seed: another value draws fresh, reproducible randomness",
    )
    run.add_argument("--no-store", action="store_true", help="do not write the results store")
    from evals.model.defaults import DEFAULT_RUNS_IN_MEMORY

    run.add_argument(
        "--runs-in-memory",
        type=_non_negative,
        metavar="N",
        help="an evaluation of fewer runs keeps them in memory for the reports that list "
        "every run; a larger one's are read back from the store (default: the suite's "
        f"reports.runs_in_memory, else {DEFAULT_RUNS_IN_MEMORY}; 0: always from the store)",
    )
    reuse = run.add_mutually_exclusive_group()
    reuse.add_argument(
        "--reuse-baseline",
        action="store_true",
        help="answer the baseline agent from its stored runs when its fingerprint, the suite "
        "and --seed are unchanged, even when its fingerprint cannot see its code (by default "
        "only when it can), behind a drift guard that re-runs a share of them fresh (falls "
        "back to a fresh baseline on drift)",
    )
    reuse.add_argument(
        "--fresh-baseline",
        action="store_true",
        help="run the baseline agent fresh, never from its stored runs (also "
        "gates.reuse_baseline: false)",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    run.add_argument(
        "--grader",
        metavar="PROVIDER_ID",
        help="provider for model-graded assertions (over defaultTest.options)",
    )
    _add_store(run)
    run.add_argument(
        "--cache",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH",
        help="answer calls an unchanged agent already answered (same request and seed) from "
        "the response cache, .evals/cache/responses.db or PATH (off by default)",
    )
    _add_executor(run)
    run.set_defaults(handler=cmd_run)

    merge = sub.add_parser("merge", help="merge the shards of an evaluation into one")
    merge.add_argument(
        "out",
        metavar="OUT",
        help=output_help("store to write (SQLite path or URL) or a report file"),
    )
    merge.add_argument(
        "shards",
        nargs="+",
        metavar="SHARD",
        help="shard results stores (SQLite files or URLs) or shard .json reports",
    )
    merge.add_argument("--suite", help="suite file (default: the one the shards ran)")
    merge.add_argument(
        "--evaluation-id", type=_evaluation_id, help="merge only this evaluation's shards"
    )
    _add_outputs(merge)
    merge.add_argument("--quiet", "-q", action="store_true")
    merge.set_defaults(handler=cmd_merge)

    regrade = sub.add_parser("regrade", help="grade stored runs again, without calling agents")
    regrade.add_argument("evaluation", metavar="EVAL_ID", help="stored evaluation to regrade")
    regrade.add_argument("--suite", help="suite file (default: the one the evaluation ran)")
    _add_outputs(regrade)
    regrade.add_argument("--quiet", "-q", action="store_true")
    _add_store(regrade)
    regrade.set_defaults(handler=cmd_regrade)

    plan = sub.add_parser(
        "plan", help="how likely the regression gate finds a drop, and what a target needs"
    )
    plan.add_argument("suite", help="suite YAML file or a directory holding promptfooconfig.yaml")
    plan.add_argument("--env", choices=["pr", "nightly", "release"], help="gate environment")
    plan.add_argument("--cases", type=int, metavar="N", help="cases (default: the suite's)")
    plan.add_argument(
        "--repeats", type=int, metavar="K", help="repeats (default: the environment's repeat)"
    )
    plan.add_argument(
        "--effect", type=float, metavar="D", help="target drop in pass rate (default 0.10)"
    )
    plan.add_argument(
        "--baseline-rate",
        type=float,
        metavar="P",
        help="baseline pass rate (default: from the store, else 0.7)",
    )
    plan.add_argument(
        "--icc",
        type=float,
        metavar="R",
        help="intra-class correlation of repeats (default: from the store, else 0.4)",
    )
    plan.add_argument(
        "--tolerance",
        type=float,
        metavar="T",
        help="tolerated loss (default: the gates' max_regression, else margin)",
    )
    plan.add_argument("--power", type=float, default=0.8, help="power to aim for (default 0.8)")
    _add_store(plan)
    plan.set_defaults(handler=cmd_plan)

    validate = sub.add_parser("validate", help="check a suite without running it")
    validate.add_argument("suite")
    validate.add_argument(
        "--json", action="store_true", help="print the outline and the fingerprints as JSON"
    )
    validate.set_defaults(handler=cmd_validate)

    listing = sub.add_parser(
        "plugins", help="list the assertion types, gates, report formats and agents plugins add"
    )
    listing.set_defaults(handler=cmd_plugins)

    compat = sub.add_parser(
        "compat-check",
        help="run promptfoo and evals on promptfoo configs and compare their rows",
    )
    compat.add_argument("paths", nargs="+", help="config files or folders holding configs")
    compat.add_argument("--promptfoo", help="promptfoo CLI (default: $EVALS_PROMPTFOO, PATH)")
    compat.add_argument("--goldens", help="folder for promptfoo's trimmed outputs")
    compat.add_argument("--refresh", action="store_true", help="run promptfoo again")
    compat.add_argument(
        "--env", action="append", metavar="NAME=VALUE", help="environment for both tools"
    )
    compat.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    compat.add_argument("--verbose", action="store_true", help="list every differing row")
    compat.set_defaults(handler=cmd_compat_check)

    history = sub.add_parser("history", help="list stored evaluations")
    history.add_argument("--suite", help="only this suite id")
    history.add_argument("--env", help="only this environment")
    history.add_argument(
        "--limit", type=_non_negative, default=20, help="list at most N (default 20)"
    )
    _add_store(history)
    history.set_defaults(handler=cmd_history)

    baseline = sub.add_parser("baseline", help="which evaluation is the baseline and why")
    baseline_sub = baseline.add_subparsers(dest="action", required=True)
    shown = baseline_sub.add_parser("show", help="the baseline of each suite, and why")
    shown.add_argument("--suite", help="only this suite id")
    shown.add_argument("--branch", default="main", help="branch of the nightlies (default main)")
    _add_store(shown)
    accepted = baseline_sub.add_parser(
        "accept", help="make a nightly the gates did not choose the baseline (recorded)"
    )
    accepted.add_argument("id", help="the evaluation's id (`evals history`)")
    accepted.add_argument("--reason", required=True, help="why it is accepted")
    accepted.add_argument("--by", help="who accepts it (default $EVALS_TRIAGE_ACTOR or the user)")
    _add_store(accepted)
    baseline.set_defaults(handler=cmd_baseline)

    triage = sub.add_parser("triage", help="acknowledge, quarantine, accept: the triage log")
    triage_sub = triage.add_subparsers(dest="action", required=True)
    listed = triage_sub.add_parser("list", help="triage actions in force, newest first")
    listed.add_argument("--suite", help="only this suite id")
    listed.add_argument(
        "--all", action="store_true", help="the whole log: removed and expired actions too"
    )
    _add_store(listed)
    added = triage_sub.add_parser("add", help="record a triage action")
    added.add_argument("kind", choices=["acknowledge", "quarantine", "accept-disagreement"])
    added.add_argument("--suite", required=True, help="suite id")
    added.add_argument("--case", help="case id (a quarantine needs one)")
    added.add_argument("--env", choices=["pr", "nightly", "release"], help="default: every one")
    added.add_argument("--until", help="a quarantine's expiry: 7d, 12h, 2026-12-24, ISO time")
    added.add_argument("--evaluation", help="the evaluation it concerns")
    added.add_argument("--gate", help="the gate it concerns (acknowledge)")
    added.add_argument("--reason", required=True, help="why (stored and shown)")
    added.add_argument("--link", help="an https:// link: the issue, the fix")
    added.add_argument("--by", help="who (default: $EVALS_TRIAGE_ACTOR, else the user name)")
    _add_store(added)
    labelled = triage_sub.add_parser(
        "labels",
        help="people's verdicts on runs (overrides, thumbs) as a file for `evals calibrate`",
    )
    labelled.add_argument("--suite", required=True, help="suite id")
    labelled.add_argument(
        "--assertion",
        default="llm-rubric",
        help="the judge's assertion type, taken from each run's grade (default llm-rubric)",
    )
    labelled.add_argument("-o", "--output", required=True, help="the .jsonl file to write")
    _add_store(labelled)
    annotated = triage_sub.add_parser(
        "annotate",
        help="a person's verdict override, thumb or comment on one stored run (no gate reads it)",
    )
    annotated.add_argument("kind", choices=["override", "rate", "comment"])
    annotated.add_argument("--evaluation", required=True, help="the run's evaluation id")
    annotated.add_argument("--case", required=True, help="the run's case id")
    annotated.add_argument("--agent", required=True, help="the run's agent label")
    annotated.add_argument(
        "--repeat",
        type=_positive,
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
    annotated.add_argument("--by", help="who (default: $EVALS_TRIAGE_ACTOR, else the user name)")
    _add_store(annotated)
    removed = triage_sub.add_parser("remove", help="withdraw an action (recorded, not deleted)")
    removed.add_argument("id", type=int, help="the action's id (`evals triage list`)")
    removed.add_argument("--reason", required=True, help="why")
    removed.add_argument("--by", help="who (default: $EVALS_TRIAGE_ACTOR, else the user name)")
    _add_store(removed)
    triage.set_defaults(handler=cmd_triage)

    compare = sub.add_parser("compare", help="compare two stored evaluations")
    compare.add_argument(
        "baseline", nargs="?", help="baseline evaluation id (default: the baseline of main)"
    )
    compare.add_argument("candidate", nargs="?", help="candidate evaluation id (default: latest)")
    compare.add_argument("--suite", help="suite id, to pick defaults")
    compare.add_argument("--baseline-agent", help="agent of the baseline evaluation to compare")
    compare.add_argument("--candidate-agent", help="agent of the candidate evaluation to compare")
    compare.add_argument("--env", choices=["pr", "nightly", "release"], help="gate environment")
    compare.add_argument(
        "--allow-fingerprint-mismatch",
        action="store_true",
        help="compare evaluations of different suite versions on the cases both share "
        "(the differences are listed); agent changes never need it",
    )
    compare.add_argument(
        "--baseline-branch",
        default="main",
        help="branch whose baseline is the default baseline (default main)",
    )
    _add_outputs(compare)
    compare.add_argument("--quiet", "-q", action="store_true")
    _add_store(compare)
    compare.set_defaults(handler=cmd_compare)

    _add_ci(sub)
    store = sub.add_parser("store", help="maintain the results store")
    store_commands = store.add_subparsers(dest="store_command", required=True)
    prune = store_commands.add_parser(
        "prune", help="keep the newest N evaluations of each suite (and the latest baseline)"
    )
    prune.add_argument("--keep", type=_positive, required=True, metavar="N")
    _add_store(prune)
    prune.set_defaults(handler=cmd_store_prune)
    check = store_commands.add_parser(
        "check", help="check that a store is whole and readable (exit 1 when it is not)"
    )
    _add_store(check)
    check.set_defaults(handler=cmd_store_check)

    calibration = sub.add_parser("calibrate", help="measure an LLM judge against human labels")
    calibration.add_argument("file", help="calibration file (.yaml with items: or .jsonl)")
    calibration.add_argument("--grader", metavar="PROVIDER_ID", help="judge provider to measure")
    calibration.add_argument("--concurrency", "-j", type=_positive, default=4)
    calibration.add_argument("--min-kappa", type=float, help="fail below this Cohen's kappa")
    calibration.add_argument("--min-accuracy", type=float, help="fail below this agreement")
    calibration.set_defaults(handler=cmd_calibrate)

    dashboard = sub.add_parser("dashboard", help="open the results dashboard")
    dashboard.add_argument(
        "--host", default="127.0.0.1", help="bind address (default localhost only)"
    )
    dashboard.add_argument(
        "--port", type=_port, default=8501, help="port to listen on, 1-65535 (default 8501)"
    )
    dashboard.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="serve a non-loopback address without login (trusted networks only)",
    )
    _add_store(dashboard)
    dashboard.set_defaults(handler=cmd_dashboard)
    return parser


def _add_ci(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evals ci pr` and `evals ci nightly`, the two CI jobs."""
    from evals.model.defaults import DEFAULT_STAGES

    ci = sub.add_parser("ci", help="the CI jobs: a pull request's verdict, the nightly baseline")
    jobs = ci.add_subparsers(dest="ci_command", required=True)
    pr = jobs.add_parser(
        "pr", help="compare the pull request's agents with main's, gate, write the comment"
    )
    pr.add_argument("suite", help="suite YAML file or a directory holding promptfooconfig.yaml")
    pr.add_argument(
        "--store",
        metavar="URL",
        help="baseline store, read only: the team's store through a read-only role, or the "
        "nightly's SQLite store artifact (never $EVALS_STORE_URL)",
    )
    pr.add_argument(
        "--base", metavar="REF", help="base branch (default origin/$GITHUB_BASE_REF, else main)"
    )
    pr.add_argument("--agent", action="append", help="compare this agent (default: changed ones)")
    pr.add_argument("--repeat", "-r", type=_positive, help="repeats per case and agent")
    pr.add_argument(
        "--effect",
        type=float,
        metavar="D",
        help="take the repeats the power plan needs to detect a difference D in pass rate",
    )
    pr.add_argument(
        "--max-repeats", type=_positive, default=20, help="cap for --effect (default 20)"
    )
    pr.add_argument(
        "--until-decided",
        nargs="?",
        const=DEFAULT_STAGES,
        type=_stages,
        metavar="STAGES",
        help="run in stages of cumulative repeats (default 5,10,20) until the gates decide",
    )
    _add_adaptive(pr)
    pr.add_argument(
        "--resume",
        action="store_true",
        help="go on with a stopped job: keep the scratch store in --out and run only the runs "
        "it lacks",
    )
    pr.add_argument(
        "--fresh-baseline",
        action="store_true",
        help="run main's agent fresh in the job, never from the nightly's stored runs or "
        "responses (also gates.environments.pr.reuse_baseline: false)",
    )
    pr.add_argument("--seed", type=int, help="seed salt (default: the nightly's)")
    pr.add_argument(
        "--evaluation-id", type=_evaluation_id, help="id of the pull request's evaluation"
    )
    pr.add_argument("--out", default=".evals/ci", help="output folder (default .evals/ci)")
    pr.add_argument("--nightly-branch", help="branch of the stored nightly (default: the base)")
    pr.add_argument("--report-url", help="link to the HTML report (default: the workflow run)")
    pr.add_argument(
        "--env-cache",
        metavar="DIR",
        help="where main's virtual environments are cached (default $EVALS_ENV_CACHE, else "
        "~/.cache/evals/envs)",
    )
    pr.set_defaults(handler=cmd_ci_pr)

    nightly = jobs.add_parser(
        "nightly", help="run or merge tonight's evaluation, store it, compare with last night"
    )
    nightly.add_argument("suite", help="suite YAML file or a directory")
    nightly.add_argument(
        "--shards",
        nargs="+",
        metavar="PATH",
        help="merge these shard stores or .json reports (or folders of them) instead of running",
    )
    nightly.add_argument(
        "--keep", type=_positive, metavar="N", help="prune the store to N per suite"
    )
    nightly.add_argument("--evaluation-id", type=_evaluation_id, help="id of tonight's evaluation")
    nightly.add_argument("--out", default=".evals/nightly", help="output folder")
    nightly.add_argument("--repeat", "-r", type=_positive, help="repeats (default: the nightly's)")
    nightly.add_argument("--seed", type=int, default=0, help="seed salt")
    _add_store(nightly)
    _add_executor(nightly)
    nightly.set_defaults(handler=cmd_ci_nightly)
    for job in (pr, nightly):
        job.add_argument("--concurrency", "-j", type=_positive, help="runs in flight at once")
        job.add_argument("--timeout", type=_seconds, metavar="SECONDS", help="per-run timeout")
        job.add_argument("--quiet", "-q", action="store_true", help="do not print the summary")


def console() -> None:
    """Entry point of the `evals` command and `python -m evals`: `main`, then exit. A second
    stop signal that arrives while the first is handled, or while the process shuts down
    after it, still ends the process with the interrupted exit code, never a traceback."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = int(ExitCode.INTERRUPTED)
    if code == ExitCode.INTERRUPTED:
        # what completed is stored and marked; the interpreter's teardown would join agent
        # threads and restore the default signal handlers, where one more Ctrl-C kills
        exit_at_next_stop(code)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _exit_without_teardown(code)


def _exit_without_teardown(code: int) -> None:
    """Exit with `code` after the exit handlers have run and the standard streams are
    flushed, skipping the interpreter's teardown, which frees every object of the
    evaluation one at a time (about a tenth of a second of CPU after 5000 runs) although
    the process is ending. Everything the harness writes is closed by then (the store and
    report processes have exited, reports are written with closed files). While a thread
    the teardown would wait for still runs, or a standard stream cannot be flushed, the
    ordinary exit happens instead, with its join and its error."""
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def _store_location(args: argparse.Namespace) -> str:
    """Where the command's store is, to name it in a message (its password hidden)."""
    from evals.store.location import display_location

    try:
        return display_location(getattr(args, "store", None))
    except SuiteError:
        return str(getattr(args, "store", None) or "the default location")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; returns the process exit code."""
    from evals.common.ci_log import workflow_commands_paused

    with workflow_commands_paused():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    collect_rarely()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with stop_signals_as_interrupt():
            return int(args.handler(args))
    except SuiteError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return int(ExitCode.INVALID_INPUT)
    except HarnessFault as exc:
        print(f"harness fault: {exc}", file=sys.stderr)
        return int(ExitCode.HARNESS_FAULT)
    except KeyboardInterrupt:
        print("interrupted; resume with --resume", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug of the harness must not look like a failed gate (exit 1)
        from evals.common.faults import fault_message, is_store_fault

        if is_store_fault(exc):
            where = f"the results store at {_store_location(args)}"
            print(f"harness fault: {fault_message(exc, where)}", file=sys.stderr)
            return int(ExitCode.HARNESS_FAULT)
        import traceback

        traceback.print_exc()
        print(
            "harness fault: the error above is a bug in evals, not in your suite", file=sys.stderr
        )
        return int(ExitCode.HARNESS_FAULT)


if __name__ == "__main__":
    sys.exit(main())
