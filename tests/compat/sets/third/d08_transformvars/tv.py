def get_transform(vars, context):
    return {"upper": str(vars.get("name", "")).upper(), "n2": int(vars.get("n", 0)) * 2}
