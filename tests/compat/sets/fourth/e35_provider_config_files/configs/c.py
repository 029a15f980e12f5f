def get_params():
    return {"max_tokens": 10, "foo": "bar"}
