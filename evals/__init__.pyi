# The public API: what `from evals import ...` offers (evals/__init__.py loads each on use).
# Writing agents and plugins
from .agents.base import Agent as Agent
from .agents.base import CallContext as CallContext
from .common.plugins import PluginError as PluginError
from .gates.families import Levels as Levels
from .gates.registry import Evidence as Evidence
from .gates.registry import Gate as Gate
from .gates.registry import Scope as Scope
from .gates.registry import when_set as when_set
from .graders.base import GradeContext as GradeContext
from .graders.base import GraderError as GraderError
from .graders.registry import register as register
from .graders.registry import value_check as value_check

# Data the harness hands over
from .model.errors import ExitCode as ExitCode
from .model.errors import HarnessFault as HarnessFault
from .model.errors import SuiteError as SuiteError
from .model.evaluation import EvaluationResult as EvaluationResult
from .model.gates import GateConfig as GateConfig
from .model.options import RunOptions as RunOptions
from .model.results import AgentResponse as AgentResponse
from .model.results import Grade as Grade
from .model.results import RunRecord as RunRecord
from .model.suite import Assertion as Assertion
from .model.suite import Case as Case
from .model.suite import ProviderSpec as ProviderSpec
from .model.suite import Suite as Suite
from .model.summary import GateResult as GateResult
from .model.summary import Summary as Summary
from .model.trajectory import Step as Step

# Running evaluations from Python
from .pipeline.evaluation import run_evaluation as run_evaluation
from .reports.writers import write_report as write_report
from .suite import load_suite as load_suite

__version__: str
