"""What the log says of one cluster's contact with its API server: one line when it is lost, one
when it is back, never a line per watch per retry (ten kinds retrying with backoff wrote about 60
lines a minute for one member down). A kind the API server refuses to the dashboard's account
(a missing right) is said once, until it is read again."""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("app.kube.api.cache")


class Contact:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lost_at: float | None = None  # when the first watch failed after all were in contact
        self._failing: set[str] = set()  # the kinds failing since

    def failed(self, kind: str, message: str, detail: str, refused: bool = False) -> None:
        """A watch of ``kind`` failed (``refused``: the API server answered, refusing the account)."""
        with self._lock:
            first_of_kind = kind not in self._failing
            self._failing.add(kind)
            lost = not refused and self._lost_at is None
            if lost:
                self._lost_at = time.monotonic()
        if lost:
            log.warning("lost contact with the API server (watch of %s): %s [%s]; retrying, backing off "
                        "to 30 s", kind, message, detail)  # fmt: skip
        elif refused and first_of_kind:
            log.warning("watch of %s refused: %s [%s]", kind, message, detail)
        else:
            log.debug("watch of %s failed: %s [%s]", kind, message, detail)

    def ok(self, kind: str) -> None:
        """``kind`` is read again (listed, or its watch open)."""
        with self._lock:
            if kind not in self._failing:
                return
            self._failing.discard(kind)
            if self._failing or self._lost_at is None:
                return
            lasted, self._lost_at = time.monotonic() - self._lost_at, None
        log.info("contact with the API server back after %.0f s", lasted)

    def forget(self, kind: str) -> None:
        """``kind`` is no longer watched: its failures count no more."""
        self.ok(kind)
