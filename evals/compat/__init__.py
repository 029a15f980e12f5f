"""Promptfoo compatibility: `evals compat-check` runs promptfoo and evals on the same
configs (`promptfoo_check`) and compares their results row by row (`promptfoo_rows`)."""
