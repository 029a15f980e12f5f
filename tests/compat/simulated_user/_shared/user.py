"""The user of the simulated-user compatibility configs: a persona read off its instructions.

It says the instructions' sentences one per turn (at most three), then ###STOP###. It reads
only the instructions and the transcript, so evals (which calls it as the config's user
provider) and promptfoo (whose hosted user the test server answers with it) hold the same
conversation.
"""

import json
import re

MAX_MESSAGES = 3


def reply(instructions, history):
    """The user's next message, from its instructions and the transcript (the user's own
    messages are `assistant` ones: the roles are flipped for the user)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", instructions or "") if s.strip()]
    said = sum(message["role"] == "assistant" for message in history)
    if said < min(len(sentences), MAX_MESSAGES):
        return sentences[said]
    return "Thanks. ###STOP###"


def call_api(prompt, options, context):
    history = [m for m in json.loads(prompt) if m["role"] != "system"]
    return {"output": reply(context["vars"].get("instructions"), history)}
