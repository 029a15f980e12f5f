def add_suffix(output, context):
    return output + " [" + context["vars"]["tag"] + "]"


def wrap(output, context):
    return "<" + output + ">"


def lengths(output, context):
    return str(len(output))


def vars_upper(vars, context):
    return {"shout": vars["word"].upper()}
