import json
import sys

context = json.loads(sys.argv[1])
print("Script prompt about", context["vars"]["topic"])
print("provider", context["provider"]["id"])
