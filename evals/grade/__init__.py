"""The grading engine: a case's assertions applied to one run with promptfoo's scoring
rules (`grading`), group assertions decided over the runs of a test (`groups`), and a
judge graded over a calibration file (`calibration`)."""
