"""Whether the API server can serve what it is asked: its /readyz, asked every few seconds.

A watch stays open while the API server has lost etcd: no event arrives, and nothing says so.
/readyz does (it is readable by anyone authenticated, and it is not a list)."""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from app.base import workers
from app.kube.api import raw
from app.kube.api.errors import TooLong, translate

if TYPE_CHECKING:
    from kubernetes import client

log = logging.getLogger(__name__)
NOT_READY = "The API server is not ready ({}): what is shown may be out of date."


class Readiness:
    def __init__(self, api: client.ApiClient, interval: float = 10.0) -> None:
        self.api = api
        self.interval = interval
        self.problem: str | None = None  # what /readyz said was failing; None while ready
        self.last_ready: float | None = None  # monotonic time it last said ready
        self._nudged = threading.Event()

    def nudge(self) -> None:
        """Ask again now, not at the next interval: a watch just failed."""
        self._nudged.set()

    def start(self, stop: threading.Event) -> threading.Thread:
        return workers.every("readyz", self.interval, self.ask, stop, wake=self._nudged)

    def check(self) -> str | None:
        """What /readyz says is failing, or None when the API server is ready."""
        conf = self.api.configuration
        headers = {a["key"]: a["value"] for a in conf.auth_settings().values() if a.get("in") == "header"}
        try:
            resp = self.api.rest_client.request(
                "GET", f"{conf.host}/readyz", headers=headers, _request_timeout=(3, 5)
            )
        except Exception as exc:  # noqa: BLE001 - unreachable, timed out: not ready
            err = translate(exc)
            log.debug("/readyz of the API server: %s", err.detail)
            return NOT_READY.format(err.message)
        if 200 <= resp.status < 300:
            return None
        try:  # which checks failed, read within a bound like any answer
            body = raw.body(resp.response, most=raw.ERROR_MOST).decode(errors="replace")
        except (TooLong, OSError):
            body = ""
        failed = [line[3:].strip() for line in body.splitlines() if line.startswith("[-]")]
        return NOT_READY.format(", ".join(failed) if failed else f"HTTP {resp.status}")

    def ask(self) -> None:
        """Ask /readyz once and keep what it says (a change to not ready is logged once)."""
        problem = self.check()
        if problem is None:
            self.last_ready = time.monotonic()
        elif self.problem is None:
            log.warning("%s", problem)
        self.problem = problem
