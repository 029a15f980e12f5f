"""A harness stand-in for the store tests: hands a slice of the test plan to a store process.

Usage: python write_runs.py URL EVALUATION_ID CASES REPEATS [--reverse] [--slow] [--no-flush]
Prints `store-process PID` first, then `stored N` after each flushed batch of eight runs,
so a test can kill it part way through. With --no-flush it hands over every run, prints
`sent N` and waits to be killed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from records import make_meta, make_records

from evals.store.process import StoreProcess


def main(argv: list[str]) -> None:
    """Hand every record of the plan to a store process, batch by batch."""
    url, evaluation_id, cases, repeats = argv[0], argv[1], int(argv[2]), int(argv[3])
    records = make_records(cases, repeats)
    if "--reverse" in argv:
        records.reverse()
    store = StoreProcess(url, batch_size=8)
    print(f"store-process {store.pid}", flush=True)
    store.begin(make_meta(evaluation_id), create=False)
    for index, record in enumerate(records, start=1):
        store.add(record)
        if "--no-flush" in argv:
            continue
        if index % 8 == 0:
            store.flush()
            print(f"stored {index}", flush=True)
            if "--slow" in argv:
                time.sleep(0.02)
    if "--no-flush" in argv:
        print(f"sent {len(records)}", flush=True)
        time.sleep(600)
    store.flush()
    print(f"stored {len(records)}", flush=True)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1:])
