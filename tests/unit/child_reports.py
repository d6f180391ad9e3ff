"""A child that says what it was given (tests/unit/test_bounded_child.py): its environment,
working directory, isolation flag and sys.path, as JSON on stdout."""

import json
import os
import sys

if __name__ == "__main__":
    print(json.dumps({"env": dict(os.environ), "cwd": os.getcwd(), "isolated": sys.flags.isolated,
                      "path": sys.path}))  # fmt: skip
