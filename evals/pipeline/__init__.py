"""Whole evaluations end to end: run one (`evaluation`), in stages until the gates are
decided (`staged`), regrade, merge shards, compare stored evaluations (`history`), and
calibrate a judge (`calibration`); `evals run` as a whole, processes, looks, reports and
exit code (`suite_run`), and the end every command that gates an evaluation shares
(`finish`). The command line and the tests call these."""
