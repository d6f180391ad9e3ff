"""A Python child process that trusts nothing it need not: the selector evaluator
(app/sandbox/cel_sandbox.py) and the GPU usage refresh (app/usage/refresh.py) are each started here.

* ``python -I``: no ``PYTHON*`` variable, no user site-packages, nothing imported from the
  working directory; the child imports the same ``app`` package as its parent, by path;
* an environment of ``PATH`` and ``LANG`` alone, plus the names a caller passes on (the usage
  refresh: the proxy variables that reach Prometheus): no ``EXTRES_*`` setting, no key;
* its working directory ``/``, which only root may write;
* its address space and core size limited (``prlimit`` from here: this process has threads, and
  a forked child must not run Python before ``exec``);
* how it ended, classified (``classify``) and counted per child (``EXITS``, the metric
  ``extres_child_exits_total{child, reason}``): crashed (a signal: SIGSEGV in native code, the
  kernel's OOM killer), stalled (killed here past its deadline), over memory (its address-space
  limit reached: the child's prelude turns MemoryError into ``OVER_MEMORY``), stopped with the
  server (the process group's SIGTERM or SIGINT), or failed (any other exit);
* started at most ``restarts`` times a minute (``Child``): past that, not started again until the
  minute is over, so a child that dies on arrival costs a few starts, never a busy loop."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from pathlib import Path
from typing import IO, Any

ROOT = str(Path(__file__).resolve().parent.parent)  # where the parent's ``app`` package is
BASE_ENV = {"PATH": os.defpath, "LANG": "C.UTF-8"}
OVER_MEMORY = 86  # the exit status of a child that reached its address-space limit
_RUN = """
import os, runpy, sys
sys.path.insert(0, sys.argv.pop(1))
try:
    runpy.run_module(sys.argv[1], run_name="__main__")
except MemoryError:
    os._exit(86)
"""
CRASHED, STALLED, OVER = "crashed", "stalled", "over memory"
STOPPED, FAILED = "stopped with the server", "failed"
STOPPED_BY = (-signal.SIGTERM, -signal.SIGINT)  # the signals that stop the group with the server


def classify(returncode: int | None, stalled: bool = False) -> str:
    """Why a child ended that was not asked to: ``stalled`` when it was killed here past its
    deadline."""
    if stalled:
        return STALLED
    if returncode in STOPPED_BY:
        return STOPPED
    if returncode == OVER_MEMORY:
        return OVER
    if returncode is not None and returncode < 0:
        return CRASHED
    return FAILED


class Exits:
    """Children that ended unasked, per (child, reason), for the metrics."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def record(self, child: str, reason: str) -> None:
        with self._lock:
            self._counts[(child, reason)] += 1

    def counts(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._counts)


EXITS = Exits()


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


class Ended(Exception):
    """A one-shot child (``Child.run``) gave no answer: how it ended (``classify``) and its exit."""

    def __init__(self, reason: str, returncode: int | None, deadline: float) -> None:
        super().__init__(f"{reason} (exit {returncode})")
        self.reason, self.returncode, self.deadline = reason, returncode, deadline


class Child:
    """One kind of child: its module, name (in the metric), memory and the environment names it is
    passed. ``start`` starts one (None past ``restarts`` a minute); ``ended`` ends one that is lost
    and says how; ``run`` is a whole one-shot exchange: bytes in, bytes out, within a deadline."""

    def __init__(
        self, name: str, module: str, memory: int, *, passed_env: tuple[str, ...] = (), restarts: int = 10
    ) -> None:
        self.name, self.module, self.memory, self.passed_env = name, module, memory, passed_env
        self.restarts = restarts
        self.last_exit = ""  # how the last one lost ended (``classify``)
        self._started: deque[float] = deque()
        self._lock = threading.Lock()

    def start(self, **popen: Any) -> subprocess.Popen[bytes] | None:
        """A new child, its pipes as ``popen`` says; None when ``restarts`` started this minute."""
        now = time.monotonic()
        with self._lock:
            while self._started and self._started[0] < now - 60:
                self._started.popleft()
            if len(self._started) >= self.restarts:
                return None
            self._started.append(now)
        return spawn(self.module, self.memory, self.passed_env, **popen)

    def ended(self, child: subprocess.Popen[bytes], stalled: bool = False) -> str:
        """End a child that was lost (it died, or stalled: killed here), count how it ended."""
        end(child)
        reason = classify(child.returncode, stalled)
        EXITS.record(self.name, reason)
        self.last_exit = reason
        return reason

    def run(self, data: bytes, deadline: float) -> bytes:
        """Start a child, give it ``data`` and read all it writes within ``deadline`` seconds;
        Ended when it could not start (past its restarts), stalled, or exited other than 0 or
        without a word."""
        child = self.start(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if child is None:
            raise Ended(
                f"keeps failing: not started again within the minute ({self.restarts} starts)", None, deadline
            )
        try:
            out, _ = child.communicate(data, timeout=deadline)
        except subprocess.TimeoutExpired:
            raise Ended(self.ended(child, stalled=True), None, deadline) from None
        if child.returncode != 0 or not out:
            raise Ended(self.ended(child), child.returncode, deadline)
        return out


def end(child: subprocess.Popen[bytes]) -> None:
    """Kill and reap a child, its pipes closed (quietly: a request the dead child never read may
    still sit in stdin's buffer, and closing tries to write it once more: EPIPE)."""
    child.kill()
    child.wait()
    pipes: tuple[IO[bytes] | None, ...] = (child.stdin, child.stdout, child.stderr)
    for pipe in pipes:
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
