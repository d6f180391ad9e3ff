"""A Python child process that trusts nothing it need not: the selector evaluator
(app/cel_sandbox.py) and the GPU usage refresh (app/usage/refresh.py) are each started here.

* ``python -I``: no ``PYTHON*`` variable, no user site-packages, nothing imported from the
  working directory; the child imports the same ``app`` package as its parent, by path;
* an environment of ``PATH`` and ``LANG`` alone, plus the names a caller passes on (the usage
  refresh: the proxy variables that reach Prometheus): no ``EXTRES_*`` setting, no key;
* its working directory ``/``, which only root may write;
* its address space and core size limited (``prlimit`` from here: this process has threads, and
  a forked child must not run Python before ``exec``)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = str(Path(__file__).resolve().parent.parent)  # where the parent's ``app`` package is
BASE_ENV = {"PATH": os.defpath, "LANG": "C.UTF-8"}
_RUN = """
import runpy, sys
sys.path.insert(0, sys.argv.pop(1))
runpy.run_module(sys.argv[1], run_name="__main__")
"""


def command(module: str) -> list[str]:
    """The command that runs ``module`` as ``__main__`` in an isolated interpreter."""
    return [sys.executable, "-I", "-c", _RUN, ROOT, module]


def environment(passed: tuple[str, ...] = ()) -> dict[str, str]:
    return {**BASE_ENV, **{name: os.environ[name] for name in passed if name in os.environ}}


def spawn(
    module: str, memory: int, passed_env: tuple[str, ...] = (), **popen: Any
) -> subprocess.Popen[bytes]:
    """``module`` in a child: isolated, a minimal environment, cwd ``/``, at most ``memory``
    bytes of address space and no core file."""
    child = subprocess.Popen(command(module), env=environment(passed_env), cwd="/", close_fds=True, **popen)
    for kind, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CORE, 0)):
        resource.prlimit(child.pid, kind, (value, value))
    return child
