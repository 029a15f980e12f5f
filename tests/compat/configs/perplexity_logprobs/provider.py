LOG_PROBS = {
    "likely": [-0.1, -0.5, -0.2],
    "unlikely": [-3.0, -4.5, -2.25, -1.0],
    "empty": [],
}


def call_api(prompt, options, context):
    if prompt in LOG_PROBS:
        return {"output": prompt, "logProbs": LOG_PROBS[prompt]}
    return {"output": prompt}
