def get_transform(output, context):
    return output.strip().lower()

def wrap(output, context):
    return {"wrapped": output, "vars": sorted(context["vars"].keys())}
