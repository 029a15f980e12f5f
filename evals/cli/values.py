"""The values the command line's options take, each checked where argparse reads it, so a
wrong one is a usage error naming the option (exit 2) before anything starts."""

from __future__ import annotations

import argparse
import math

MAX_EVALUATION_ID = 64
"""The store's id columns hold 64 characters."""


def shard(text: str) -> tuple[int, int]:
    """`I/N`: run only shard I of N."""
    try:
        index, total = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError("use i/n, for example 2/3") from None
    if not 1 <= index <= total:
        raise argparse.ArgumentTypeError("shard index must be between 1 and the shard count")
    return index, total


def stages(text: str) -> tuple[int, ...]:
    """Cumulative repeats per stage, such as `5,10,20`."""
    from evals.pipeline.staged import parse_stages

    try:
        return parse_stages(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _whole(text: str, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number is needed, not {text!r}") from None
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" and at most {maximum}" if maximum is not None else ""
        raise argparse.ArgumentTypeError(f"must be at least {minimum}{upper}, got {value}")
    return value


def positive(text: str) -> int:
    """A whole number of at least 1 (repeats, runs in flight, evaluations to keep)."""
    return _whole(text, 1)


def non_negative(text: str) -> int:
    """A whole number of at least 0 (how many evaluations to list)."""
    return _whole(text, 0)


def port(text: str) -> int:
    """A TCP port to listen on, 1 to 65535."""
    return _whole(text, 1, 65535)


def seconds(text: str) -> float:
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


def evaluation_id(text: str) -> str:
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
