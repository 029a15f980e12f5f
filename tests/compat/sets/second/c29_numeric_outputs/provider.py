import math
VALUES = {
    "sum": 0.1 + 0.2,
    "one_float": 1.0,
    "big": 1e21,
    "small": 1e-7,
    "int_big": 2**60,
    "neg_zero": -0.0,
    "nested": {"f": 1.0, "g": 0.5, "s": "é", "l": [1.0, 2]},
    "unicode": {"emoji": "😀", "ctrl": "a\tb"},
    "tuple": (1, 2),
    "bool_in": {"t": True, "n": None},
}
def call_api(prompt, options, context):
    return {"output": VALUES[context["vars"]["k"]]}
