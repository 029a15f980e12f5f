def make_tests(config=None):
    out = []
    for i in range(3):
        out.append(
            {
                "description": f"generated {i}",
                "vars": {"n": str(i)},
                "assert": [{"type": "contains", "value": "1" if i != 2 else "2"}],
            }
        )
    return out
