"""Background work: every thread the app starts goes through here, named ``extres-…``, a daemon
(the process never waits on one to exit), and never ended by an exception: it is logged and a
loop goes on. Two shapes: ``start`` runs something once (a watch's own loop, a bulk job, a read),
``every`` runs something every few seconds until told to stop, sooner when woken; ``until``
waits, in the calling thread, for a condition another thread brings about."""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


def start(name: str, work: Callable[[], object]) -> threading.Thread:
    """Run ``work`` once in a daemon thread named ``extres-<name>``, in a copy of the starting
    thread's context (the cluster its log lines are about: app.base.logs)."""
    context = contextvars.copy_context()

    def run() -> None:
        try:
            work()
        except Exception:
            log.exception("background work %s failed", name)

    thread = threading.Thread(target=context.run, args=(run,), name=f"extres-{name}", daemon=True)
    thread.start()
    return thread


def every(
    name: str,
    seconds: float,
    work: Callable[[], object],
    stop: threading.Event,
    wake: threading.Event | None = None,
) -> threading.Thread:
    """Run ``work`` every ``seconds`` until ``stop`` is set (``wake`` set: at once); a failure
    is logged and the next round comes as usual."""

    def loop() -> None:
        while True:
            if wake is None:
                if stop.wait(seconds):
                    return
            else:
                wake.wait(seconds)
                wake.clear()
                if stop.is_set():
                    return
            try:
                work()
            except Exception:
                log.exception("background work %s failed; it goes on", name)

    return start(name, loop)


def until(done: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Whether ``done`` came true within ``timeout`` seconds (asked every ``interval``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(interval)
    return False
