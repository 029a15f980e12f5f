"""Number and label formatting shared by every human-readable report."""

from __future__ import annotations

from datetime import UTC, datetime

from evals.model.summary import GateReport, Interval

VERDICT_ICONS = {
    "regression": "🔴",
    "improvement": "🟢",
    "equivalent": "⚪",
    "inconclusive": "🟡",
    "insufficient data": "⚫",
}
GATE_ICONS = {"pass": "✅", "fail": "❌", "undetermined": "⚠️"}


def percent(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage ('83.3%'), or an em dash when unknown."""
    return "—" if value is None else f"{value * 100:.{digits}f}%"


def interval(bounds: Interval | None, digits: int = 1) -> str:
    """A (low, high) fraction interval as '[71.2%, 91.0%]', or an em dash."""
    if bounds is None:
        return "—"
    return f"[{bounds[0] * 100:.{digits}f}%, {bounds[1] * 100:.{digits}f}%]"


def points(value: float | None, digits: int = 1) -> str:
    """A difference of two fractions in signed percentage points ('+5.0 pp')."""
    return "—" if value is None else f"{value * 100:+.{digits}f} pp"


def points_interval(bounds: Interval | None, digits: int = 1) -> str:
    """A difference interval in percentage points ('[-12.0, +3.5] pp')."""
    if bounds is None:
        return "—"
    return f"[{bounds[0] * 100:+.{digits}f}, {bounds[1] * 100:+.{digits}f}] pp"


def count(passes: int, runs: int) -> str:
    """Passes over runs as 'k/n'."""
    return f"{passes}/{runs}"


def number(value: float | None, digits: int = 4) -> str:
    """A plain number with at most `digits` significant decimals, or an em dash."""
    if value is None:
        return "—"
    return f"{value:.{digits}g}"


def milliseconds(value: float | None) -> str:
    """A duration in ms, rounded to a readable unit."""
    if value is None:
        return "—"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def money(value: float | None) -> str:
    """A cost in currency units with enough decimals for per-run prices."""
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def cost(value: float | None, unknown_runs: int = 0) -> str:
    """A cost as `money` writes it; "unknown" where no run's cost was known, and the count
    of runs of unknown cost beside a cost known for the others ("$0.0120 (3 unknown)")."""
    if unknown_runs and value is None:
        return "unknown"
    shown = money(value)
    return f"{shown} ({unknown_runs} unknown)" if unknown_runs else shown


def ratio_change(baseline: float | None, candidate: float | None) -> str:
    """Candidate relative to baseline as a signed percentage ('+12.0%'), or an em dash."""
    if baseline is None or candidate is None or baseline == 0:
        return "—"
    return f"{(candidate / baseline - 1) * 100:+.1f}%"


def timestamp(epoch_seconds: float | None) -> str:
    """An epoch time as ISO 8601 UTC with milliseconds and a Z, as promptfoo writes it."""
    moment = datetime.fromtimestamp(epoch_seconds or 0.0, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def ago(seconds: float) -> str:
    """How long ago something happened, to the largest whole unit: `just now`,
    `5 min ago`, `3 h ago`, `1 day ago`, `12 days ago`."""
    minutes = int(max(0.0, seconds) // 60)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 24 * 60:
        return f"{minutes // 60} h ago"
    days = minutes // (24 * 60)
    return f"{days} day{'s' if days > 1 else ''} ago"


def level(value: float | None) -> str:
    """A confidence level as a percentage with the digits that matter ('99.83 %')."""
    return "—" if value is None else f"{100 * value:.4g} %"


def detection(report: GateReport) -> str:
    """What a comparison could have caught, from its regression gates: "this run would
    catch -8.0 pp on the suite, -19.0 pp on tag units" (80 % of the time; empty without
    one)."""
    caught = [
        f"{points(-g.detectable)} on "
        + ("the suite" if g.name == "regression" else f"tag {g.name[len('regression[') : -1]}")
        for g in report.gates
        if g.name.startswith("regression") and g.detectable is not None
    ]
    return f"this run would catch {', '.join(caught)}" if caught else ""


def _about(report: GateReport) -> str:
    """What the comparison's verdict is about ("on these 20 cases"), from its suite row."""
    return next((g.about for g in report.gates if g.name == "regression" and g.about), "")


def build_outcome(report: GateReport) -> str:
    """What the build does with the verdict, in words (empty for a plain fail)."""
    if report.verdict == "fail":
        return ""
    if report.verdict == "pass":
        return detection(report)
    action = report.on_undetermined
    if action == "fail":
        return "fails the build (on_undetermined: fail)"
    if action == "pass":
        where = _about(report)
        shown = f"no loss beyond the tolerance shown{' ' + where if where else ''}"
        caught = detection(report)
        return f"{shown}; {caught}" if caught else f"{shown} (on_undetermined: pass)"
    return "warning only, the build passes (on_undetermined: warn)"


def verdict_line(report: GateReport) -> str:
    """The one-line overall decision that heads every summary: the verdict under the
    environment's rule (`GateReport.outcome`), with what an undetermined verdict does to
    the build and, for a comparison, the smallest loss the run would have caught."""
    verdict = report.outcome
    where = f" ({report.environment})" if report.environment else ""
    label = {"pass": "PASS", "fail": "FAIL", "undetermined": "UNDETERMINED"}.get(
        verdict, verdict.upper()
    )
    outcome = build_outcome(report)
    suffix = f" — {outcome}" if outcome else ""
    return f"{GATE_ICONS.get(verdict, '')} Gate verdict{where}: {label}{suffix}".strip()
