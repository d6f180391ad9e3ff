"""A read of the API server kept for a few seconds, so any number of viewers costs one read per
interval, and never waited on once made: past its keeping time the last answer is given at once
while a fresh one is read in the background (one at a time, none while the API server is known
not to answer). Only the first read is waited on; with the API server known down it fails at
once instead."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from app.kube.errors import KubeError, Unavailable, translate

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
        self._refreshing = False
        self._lock = threading.Lock()  # held only to look at or replace what is kept
        self._first = threading.Lock()

    def get(self) -> tuple[T, bool]:
        """The answer, and whether it is stale (past its time while the API server does not
        answer); raises KubeError only when nothing was read yet and cannot be now."""
        unreachable = self.unreachable()
        with self._lock:
            kept = self._kept
            fresh = kept is not None and time.monotonic() - kept[0] < self.keep_seconds
            again = kept is not None and not fresh and not self._refreshing and not unreachable
            if again:
                self._refreshing = True
        if kept is None:
            if unreachable:
                raise Unavailable("The API server does not answer now.", 503)
            with self._first:  # the first read: one at a time, the others wait for it
                first = self._kept
                if first is None:
                    first = self._keep(self._read_or_raise())
                return first[1], False
        if again:
            threading.Thread(target=self._background, name=f"extres-{self.name}", daemon=True).start()
        return kept[1], unreachable and not fresh

    def expire(self) -> None:
        """What is kept is out of date (a write changed what it read): the next ``get`` still
        answers with it at once, and reads again in the background."""
        with self._lock:
            if self._kept is not None:
                self._kept = (float("-inf"), self._kept[1])

    def _background(self) -> None:
        try:
            self._keep(self._read_or_raise())
        except KubeError as exc:
            log.info("%s not read: %s [%s]", self.name, exc.message, exc.detail)
        finally:
            self._refreshing = False

    def _keep(self, found: T) -> tuple[float, T]:
        with self._lock:
            self._kept = (time.monotonic(), found)
            return self._kept

    def _read_or_raise(self) -> T:
        try:
            return self._read()
        except Exception as exc:
            raise translate(exc) from exc
