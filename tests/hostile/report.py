"""Summarise the corpus: `python -m tests.hostile.report [--markdown]`.

Counts cases by category and outcome class (passing today vs strict xfail), then lists
the failing cases grouped by root cause with the code responsible and the fix. Reads the
case tables only; it does not run anything.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict

from tests.hostile.corpus import CASES
from tests.hostile.known_failures import KNOWN_FAILURES
from tests.hostile.rootcauses import CAUSES


def counts() -> list[tuple[str, int, int, int]]:
    """(category, total, passing today, xfail) per category, then the total."""
    total: Counter[str] = Counter()
    failing: Counter[str] = Counter()
    for case in CASES:
        total[case.category] += 1
        failing[case.category] += bool(case.xfail)
    rows = [(c, total[c], total[c] - failing[c], failing[c]) for c in total]
    rows.append(
        (
            "all",
            sum(total.values()),
            sum(total.values()) - sum(failing.values()),
            sum(failing.values()),
        )
    )
    return rows


def outcome_classes() -> Counter[str]:
    """How many cases expect each outcome class."""
    return Counter(case.expect.describe().split(":")[0] for case in CASES)


def main(markdown: bool) -> None:
    """Print the counts and the root-cause table."""
    print("| category | cases | pass today | xfail |\n|---|---|---|---|" if markdown else "")
    for category, total, passing, xfail in counts():
        print(
            f"| {category} | {total} | {passing} | {xfail} |"
            if markdown
            else f"{category:10} {total:4} cases {passing:4} pass {xfail:4} xfail"
        )
    print()
    print(", ".join(f"{k}: {v}" for k, v in sorted(outcome_classes().items())))
    print()
    by_cause = defaultdict(list)
    for cause, cases in KNOWN_FAILURES.items():
        by_cause[cause].extend(cases)
    ordered = sorted(by_cause.items(), key=lambda item: -len(item[1]))
    if markdown:
        print("| root cause | cases | where (today's paths) | fix |\n|---|---|---|---|")
    for cause, cases in ordered:
        info = CAUSES[cause]
        if markdown:
            print(
                f"| **{cause}**: {info.what} | {len(cases)}: {', '.join(cases)} | "
                f"{info.where} | {info.fix} |"
            )
        else:
            print(
                f"[{cause}] {len(cases)} case(s): {info.what}\n  where: {info.where}\n"
                f"  fix: {info.fix}\n  cases: {', '.join(cases)}\n"
            )


if __name__ == "__main__":
    main("--markdown" in sys.argv[1:])
