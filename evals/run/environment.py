"""Each run's own copy of the suite's world state, and what the run left behind.

The seed is prepared once per runner (a `.sql` script built into a database); every run
copies it into a folder of its own, hands the path to the agent (`CallContext.environment`)
and, once the agent has answered, reads the state back: the changes from the seed and the
final state's digest go into the response's `metadata.environment`, where the
`final-state` grader and the reports read them. The folder is removed after the run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from evals.common.world import copy_seed, diff, digest, read_state


class WorldSeed:
    """The seed state, built once, and the document it reads as."""

    def __init__(self, seed: Path) -> None:
        # removed when the seed is collected, or when the process ends
        self._folder = tempfile.TemporaryDirectory(prefix="evals-seed-")
        self.template = copy_seed(seed, Path(self._folder.name))
        self.initial = read_state(self.template)
        self.digest = digest(self.initial)

    def fresh(self) -> RunWorld:
        """A run's own copy of the seed."""
        return RunWorld(self)


class RunWorld:
    """One run's copy of the world: its path, and the outcome read back after the run."""

    def __init__(self, seed: WorldSeed) -> None:
        self.seed = seed
        self.folder = Path(tempfile.mkdtemp(prefix="evals-world-"))
        self.path = self.folder / seed.template.name
        shutil.copyfile(seed.template, self.path)

    def outcome(self) -> dict[str, Any]:
        """What the run changed from the seed and the digest of the state it left."""
        final = read_state(self.path)
        return {
            "changes": diff(self.seed.initial, final),
            "digest": digest(final),
            "initial_digest": self.seed.digest,
        }

    def close(self) -> None:
        """Remove the run's copy."""
        shutil.rmtree(self.folder, ignore_errors=True)
