"""Bulk changes applied in the background, kept (the newest few) for their results pages.

Each running job holds one of the app's write slots, so jobs and single changes together never
take more threads than the slots allow; a verified user runs one job at a time, whatever the
session or token; a job is seen (and cancelled) only by the user who started it, and signing out
stops their running jobs. Jobs live in the process that runs them (a replica's own)."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from app.base import workers
from app.kube.api.writer import Outcome

KEPT = 100  # bulk jobs kept for their pages
PER_USER = 1  # jobs one identity may have running at once
BUSY_USER = "You have a bulk change running: wait for it to finish, or stop it. Nothing was changed."
BUSY = "Too many changes are waiting on the API server; nothing was changed. Try again."


class JobRefused(Exception):
    """A job that may not start now; the message says why (nothing was changed)."""


@dataclass
class BulkJob:
    """A change over many nodes, applied in the background: its outcomes as they come."""

    total: int
    outcomes: list[Outcome] = field(default_factory=list)
    done: bool = False
    dry_run: bool = False  # a preview: its page offers to apply what the API server accepted
    action: str = ""  # set | remove | reapply
    resource: str = ""
    count: int | None = None
    owner: Hashable = None  # the identity that started it: the only one who sees it
    cancelled: bool = False  # asked to stop: the nodes not yet written are left as they are
    nodes_done: int = 0  # nodes with their outcomes (a re-apply has one per drifted resource)


class BulkJobs:
    """The app's bulk jobs by an unguessable key, the oldest finished ones dropped past ``KEPT``."""

    def __init__(self, slots: threading.BoundedSemaphore, kept: int = KEPT, per_user: int = PER_USER):
        self.slots = slots
        self.kept = kept
        self.per_user = per_user
        self._jobs: OrderedDict[str, BulkJob] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, job: BulkJob, work: Callable[[BulkJob], None]) -> str:
        """Run ``work(job)`` in the background on a write slot; its key. Raises JobRefused when
        the owner already has a job running or every write slot is taken."""
        with self._lock:
            running = sum(1 for j in self._jobs.values() if j.owner == job.owner and not j.done)
            if running >= self.per_user:
                raise JobRefused(BUSY_USER)
            if not self.slots.acquire(blocking=False):
                raise JobRefused(BUSY)
            key = self._add(job)

        def run() -> None:
            try:
                work(job)
            finally:
                job.done = True
                self.slots.release()

        workers.start(f"bulk-{key}", run)
        return key

    def keep(self, job: BulkJob) -> str:
        """Keep a job that is already done (its outcomes known) for its page."""
        job.done = True
        with self._lock:
            return self._add(job)

    def _add(self, job: BulkJob) -> str:
        """Keep ``job`` under a new key, dropping the oldest finished past ``kept`` (lock held)."""
        key = secrets.token_urlsafe(12)
        self._jobs[key] = job
        finished = [k for k, j in self._jobs.items() if j.done]
        for k in finished[: max(0, len(self._jobs) - self.kept)]:
            del self._jobs[k]
        return key

    def cancel_owned(self, owner: Hashable) -> list[tuple[str, BulkJob]]:
        """Ask every running job of ``owner`` to stop (at sign-out); those jobs, by key."""
        with self._lock:
            running = [(k, j) for k, j in self._jobs.items() if j.owner == owner and not j.done]
        for _, job in running:
            job.cancelled = True
        return running

    def find(self, key: str, owner: Hashable) -> BulkJob | None:
        """The job, if it exists and ``owner`` started it."""
        job = self._jobs.get(key)
        return job if job is not None and job.owner == owner else None
