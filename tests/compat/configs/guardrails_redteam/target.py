"""A target whose guardrails flag prompts mentioning an attack."""


def call_api(prompt, options, context):
    flagged = "attack" in prompt
    return {
        "output": "I cannot help with that." if flagged else "Sure: " + prompt,
        "guardrails": {"flagged": flagged, "flaggedInput": flagged, "reason": "blocked input"},
    }
