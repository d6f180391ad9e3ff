"""The last usage answers, asked for in the background: every ``refresh`` seconds one refresh
(each mapping's three or four queries: app.usage.refresh), whatever the cluster's size and however many
pages are open. Pages read ``status()`` and never wait: before the first answer usage is "waiting", after
a failed refresh the last answer is kept and marked stale, and with none it is "unavailable"."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from app.base import workers
from app.domain.gpu_usage import Reading
from app.domain.usage_mapping import Sample

log = logging.getLogger(__name__)


class UsageUnavailable(Exception):
    """Prometheus did not answer, or not in time, or not as its query API does; in words, shown
    on pages. ``detail`` (what Prometheus said: its body, a redirect's target) goes to the log
    only: the operator's Prometheus is not every user's to read."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class UsageStopped(UsageUnavailable):
    """The refresh's child was stopped by a signal to the whole process group (a terminal's ^C,
    the demo or a supervisor stopping the server): said, not warned of."""


class Source(Protocol):
    """Where usage is asked (app.usage.prometheus.Prometheus; tests give their own)."""

    def query(self, expr: str) -> list[Sample]: ...


@dataclass(frozen=True)
class UsageStatus:
    state: str  # waiting | fresh | stale | unavailable
    reading: Reading | None
    error: str = ""  # why the last refresh failed
    age_seconds: float | None = None  # since the reading was taken


class UsagePoller:
    """``fetch``: one whole refresh (app.usage.refresh: in a child process for the served app)."""

    def __init__(
        self,
        fetch: Callable[[], Reading],
        refresh: float,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_refresh: Callable[[float, bool], None] = lambda seconds, ok: None,
    ) -> None:
        self.fetch = fetch
        self.refresh = refresh
        self.clock = clock
        self.on_refresh = on_refresh
        self._reading: Reading | None = None
        self._error = ""
        self._tried = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start refreshing in the background (``app.base.workers``: the first at once, then every
        ``refresh`` seconds), once however often it is called."""
        with self._lock:
            if self._thread is not None:
                return
            now = threading.Event()
            now.set()
            self._thread = workers.every("usage", self.refresh, self.poll, self._stop, wake=now)

    def poll(self) -> None:
        """One refresh, its Reading swapped in whole; on failure the last Reading stays, with
        the reason. No failure ends the refreshing: an unexpected one (the child could not be
        started, its answer not read) is logged and said like any other, and the next round
        comes as usual."""
        began = time.monotonic()
        try:
            reading = self.fetch()
        except UsageUnavailable as exc:
            self._error, self._tried = f"Prometheus: {exc}", True
            level = logging.INFO if isinstance(exc, UsageStopped) else logging.WARNING
            log.log(
                level, "usage refresh failed: %s%s", self._error, f" ({exc.detail})" if exc.detail else ""
            )
            self.on_refresh(time.monotonic() - began, False)
            return
        except Exception:  # never ends the refreshing: pages would say "waiting" for ever
            log.exception("usage refresh failed unexpectedly; the next round comes as usual")
            self._error, self._tried = "the refresh failed in the dashboard (its log says why)", True
            self.on_refresh(time.monotonic() - began, False)
            return
        self._reading, self._error, self._tried = reading, "", True
        self.on_refresh(time.monotonic() - began, True)

    def status(self) -> UsageStatus:
        reading, error = self._reading, self._error
        if reading is None:
            return UsageStatus("unavailable" if self._tried else "waiting", None, error)
        age = max(0.0, (self.clock() - reading.taken).total_seconds())
        stale = bool(error) or age > 3 * self.refresh
        return UsageStatus("stale" if stale else "fresh", reading, error, age)

    def close(self) -> None:
        self._stop.set()
