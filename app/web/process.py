"""What one worker process holds whichever cluster a request is about, kept on the app under one
key: the fleet (the local cluster's runtime and the members'), the limits on threads and plans,
the render caches (one set per cluster), the bulk jobs and the sign-in sessions. Each cluster's
runtime (app/runtime/cluster.py) holds only what is that cluster's."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flask import Flask, current_app

if TYPE_CHECKING:
    from app.runtime.cluster import Runtime, Step
    from app.runtime.fleet import Fleet
    from app.web.bulk_jobs import BulkJobs
    from app.web.limits import Limits
    from app.web.render_cache import RenderCaches
    from app.web.sessions import TokenSession

KEY = "extres"


@dataclass
class Process:
    fleet: Fleet
    limits: Limits
    bulk: BulkJobs
    tokens: TokenSession | None = None  # set by app.web.security.init_app
    steps: tuple[Step, ...] = ()  # what the served worker starts, in order (set by app.web.init_app)
    _render: dict[str, RenderCaches] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        """Each step, in order (the served worker, once it is up: never before the fork)."""
        for step in self.steps:
            step.up()

    def stop(self) -> None:
        """Each step undone, in the reverse order (the worker, after its last request)."""
        for step in reversed(self.steps):
            step.down()

    def sessions(self) -> TokenSession:
        """The sign-in sessions (made by app.web.security.init_app, before any request)."""
        assert self.tokens is not None, "app.web.security.init_app makes them"
        return self.tokens

    @property
    def local(self) -> Runtime:
        return self.fleet.local

    def render(self, cluster: str) -> RenderCaches:
        """Cluster ``cluster``'s render caches (its rows and tables are its own: one set shared by
        every cluster would be reset each time a user switched). Those of clusters gone are dropped."""
        from app.web.render_cache import RenderCaches

        with self._lock:
            found = self._render.get(cluster)
            if found is None:
                names = {self.local.name, *self.fleet.members}
                self._render = {n: c for n, c in self._render.items() if n in names}
                found = self._render[cluster] = RenderCaches()
            return found


def of(app: Flask | None = None) -> Process:
    """The process object of ``app`` (the current app when not given)."""
    found: Process = (app or current_app).extensions[KEY]
    return found
