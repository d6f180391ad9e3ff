"""The test bed never waits for nothing: a version that is built starts at once, whatever build of
another version holds its own lock meanwhile."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from pathlib import Path

import pytest

from extres_demo import testenv

pytestmark = pytest.mark.kube


def test_a_built_version_takes_no_lock_while_other_builds_hold_theirs():
    """Every lock a build could hold is held here (another version's, the old shared one, this
    version's own): ``build`` of this built version still returns at once. Were it to wait, the
    subprocess timeout would end the test (a bound on a hang, not a timing)."""
    assert testenv.built()
    bindir = Path(testenv._script("bindir", capture_output=True, text=True).stdout.strip())
    locks = [bindir.parent / "kube-v1.0.0-other.lock", bindir.parent / ".build.lock", Path(f"{bindir}.lock")]
    with contextlib.ExitStack() as stack:
        for path in locks:
            fcntl.flock(stack.enter_context(path.open("w")), fcntl.LOCK_EX)
        done = subprocess.run(
            ["bash", str(testenv.SCRIPT), "build"], env=os.environ, capture_output=True, text=True, timeout=60
        )
    locks[0].unlink()  # a stand-in: no such build exists
    assert done.returncode == 0, done.stderr
    assert "building" not in done.stderr
