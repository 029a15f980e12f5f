"""A writer process for the store tests: stores a slice of the test plan, reporting progress.

Usage: python write_runs.py URL EVALUATION_ID CASES REPEATS [--reverse] [--slow]
Prints `stored N` after each flushed batch, so a test can kill it part way through.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from records import make_records

from evals.store import open_store


def main(argv: list[str]) -> None:
    """Write every record of the plan through a store writer, batch by batch."""
    url, evaluation_id, cases, repeats = argv[0], argv[1], int(argv[2]), int(argv[3])
    records = make_records(cases, repeats)
    if "--reverse" in argv:
        records.reverse()
    store = open_store(url)
    writer = store.writer(evaluation_id, batch_size=8)
    for index, record in enumerate(records, start=1):
        writer.add(record)
        if index % 8 == 0:
            writer.flush()
            print(f"stored {index}", flush=True)
            if "--slow" in argv:
                time.sleep(0.02)
    writer.close()
    print(f"stored {len(records)}", flush=True)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1:])
