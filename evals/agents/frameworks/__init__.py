"""Agents built with a framework, run as they are: OpenAI Agents SDK, LangGraph, PydanticAI.

A suite names the agent object the team already has (`langgraph:my_app.agent:graph`,
`openai-agents:agents.py:triage`, `pydantic-ai:my_app:agent`); the adapter runs it through
the framework's own API and reads the trajectory, usage, stop reason and errors from the
framework's run result and callbacks. `current_run()` tells models and tools which run
(seed, repeat, case) they are serving.
"""

from evals.agents.frameworks.common import current_run

__all__ = ["current_run"]
