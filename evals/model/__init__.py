"""The harness's data: errors, trajectories, runs and grades, suites, gate thresholds,
statistics, evaluations, and the interfaces of the run engine.

The bottom layer: these modules import nothing else from evals, and everything else may
import them.
"""
