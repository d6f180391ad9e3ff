"""A read of the API server kept for a few seconds, so any number of viewers costs one read per
interval, and never waited on once made: past its keeping time the last answer is given at once
while a fresh one is read in the background (one at a time, none while the API server is known
not to answer). Only the first read is waited on, and the first after ``expire`` (this process
wrote what it reads: the one who wrote must see it); with the API server known down the first
fails at once instead, and an expired answer is given, marked stale."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from app.base import workers
from app.kube.api.errors import KubeError, Unavailable, translate

log = logging.getLogger(__name__)
T = TypeVar("T")


class KeptRead(Generic[T]):
    def __init__(
        self,
        read: Callable[[], T],
        keep_seconds: float,
        unreachable: Callable[[], bool] = lambda: False,
        name: str = "read",
    ) -> None:
        self._read = read
        self.keep_seconds = keep_seconds
        self.unreachable = unreachable  # True while the API server is known not to answer
        self.name = name
        self._kept: tuple[float, T] | None = None
        self._outdated = False  # expired by a write: the next get reads again before answering
        self._generation = 0  # counts expires, so a read begun before one never clears it
        self._refreshing = False
        self._lock = threading.Lock()  # held only to look at or replace what is kept
        self._first = threading.Lock()

    def get(self) -> tuple[T, bool]:
        """The answer, and whether it is stale (past its time while the API server does not
        answer); raises KubeError only when nothing was read yet and cannot be now."""
        unreachable = self.unreachable()
        with self._lock:
            kept, outdated = self._kept, self._outdated
            fresh = kept is not None and not outdated and time.monotonic() - kept[0] < self.keep_seconds
            again = (
                kept is not None and not fresh and not outdated and not self._refreshing and not unreachable
            )
            if again:
                self._refreshing = True
        if kept is None and unreachable:
            raise Unavailable("The API server does not answer now.", 503)
        if kept is None or (outdated and not unreachable):
            return self._read_now()
        if again:
            workers.start(self.name, self._background)
        return kept[1], unreachable and not fresh

    def _read_now(self) -> tuple[T, bool]:
        """Read and wait (one at a time: the others wait for it and take its answer). When an
        expired answer is kept and the read fails, that answer, marked stale."""
        with self._first:
            with self._lock:
                kept, outdated, generation = self._kept, self._outdated, self._generation
            if kept is not None and not outdated:
                return kept[1], False  # read while this one waited
            try:
                return self._keep(self._read_or_raise(), generation)[1], False
            except KubeError:
                if kept is None:
                    raise
                return kept[1], True

    def expire(self) -> None:
        """What is kept is out of date (this process wrote what it reads): the next ``get`` reads
        again and answers with what it read."""
        with self._lock:
            self._generation += 1
            self._outdated = self._kept is not None

    def _background(self) -> None:
        try:
            with self._lock:
                generation = self._generation
            self._keep(self._read_or_raise(), generation)
        except KubeError as exc:
            log.info("%s not read: %s [%s]", self.name, exc.message, exc.detail)
        finally:
            self._refreshing = False

    def _keep(self, found: T, generation: int) -> tuple[float, T]:
        """Keep what a read begun at ``generation`` found; an expire since leaves it outdated."""
        with self._lock:
            self._kept = (time.monotonic(), found)
            self._outdated = generation != self._generation
            return self._kept

    def _read_or_raise(self) -> T:
        try:
            return self._read()
        except Exception as exc:
            raise translate(exc) from exc
