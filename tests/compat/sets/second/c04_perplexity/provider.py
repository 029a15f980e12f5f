def call_api(prompt, options, context):
    return {"output": prompt, "logProbs": [-0.1, -0.5, -0.2]}
