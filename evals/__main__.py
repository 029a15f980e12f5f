"""`python -m evals` runs the command line."""

import sys

from evals.cli import main

sys.exit(main())
