"""A child that fails at once, whatever it is asked (tests/unit/test_cel_sandbox.py)."""

if __name__ == "__main__":
    raise SystemExit(1)
