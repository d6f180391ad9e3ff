"""The selector sandbox's child, misbehaving on cue (tests/unit/test_cel_sandbox.py): an
expression naming "crash" kills it with SIGSEGV, "stall" hangs it, "hog" maps 2 GiB."""

import os
import signal
import time

from app.domain import device_cel
from app.sandbox import cel_sandbox

_here = device_cel.evaluate_here


def _evaluate(pairs):
    text = pairs[0][0][0]
    if "crash" in text:
        os.kill(os.getpid(), signal.SIGSEGV)
    if "stall" in text:
        time.sleep(60)
    if "hog" in text:
        bytearray(2 << 30)
    return _here(pairs)


if __name__ == "__main__":
    device_cel.evaluate_here = _evaluate
    cel_sandbox.child()
