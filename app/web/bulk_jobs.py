"""Bulk changes applied in the background, kept (the newest few) for their results pages."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from flask import current_app

from app.kube.writer import Outcome

KEPT = 100  # bulk jobs kept for their pages


@dataclass
class BulkJob:
    """A change over many nodes, applied in the background: its outcomes as they come."""

    total: int
    outcomes: list[Outcome] = field(default_factory=list)
    done: bool = False
    dry_run: bool = False  # a preview: its page offers to apply what the API server accepted
    action: str = ""
    resource: str = ""
    count: int | None = None


class BulkJobs:
    """The app's bulk jobs by an unguessable key, the oldest dropped past ``KEPT``."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._jobs: OrderedDict[str, BulkJob] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def get() -> BulkJobs:
        jobs: BulkJobs = current_app.extensions["extres_bulk"]
        return jobs

    def keep(self, job: BulkJob) -> str:
        key = secrets.token_urlsafe(12)
        with self._lock:
            self._jobs[key] = job
            while len(self._jobs) > self.kept:
                self._jobs.popitem(last=False)
        return key

    def find(self, key: str) -> BulkJob | None:
        return self._jobs.get(key)
