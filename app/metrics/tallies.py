"""Counts the process keeps that its metrics read at each scrape, written by parts that must not
import the metrics (the server's worker is loaded by gunicorn's master, which imports nothing the
worker alone uses)."""

from __future__ import annotations

import threading


class Tally:
    """A count kept by the process (the intake's), read at each scrape."""

    def __init__(self) -> None:
        self._n = 0
        self._lock = threading.Lock()

    def add(self, n: int = 1) -> None:
        with self._lock:
            self._n += n

    @property
    def value(self) -> int:
        with self._lock:
            return self._n


# answers the HTTP intake dropped with their connection: the client had stopped reading and the
# intake's budget was spent (app.serving.http_worker)
ANSWERS_DROPPED = Tally()
