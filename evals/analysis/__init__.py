"""Statistics of evaluations: the summary of a set of runs (`summarize`), power planning
(`power`) and a judge's agreement with human labels (`agreement`)."""
