def get_transform(output, context):
    return output.upper() + "|" + str(context['vars'].get('k'))

def as_obj(output, context):
    return {"o": output, "n": len(output)}
