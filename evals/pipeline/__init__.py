"""Whole evaluations end to end: run one (`evaluation`), in stages until the gates are
decided (`staged`), regrade, merge shards, compare stored evaluations (`history`), and
calibrate a judge (`calibration`). The command line and the tests call these."""
