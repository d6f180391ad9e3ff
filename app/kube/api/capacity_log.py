"""The durable capacity history (``app.domain.capacity_log``), kept in the cluster itself: 32
ConfigMaps ``<prefix>-00`` to ``<prefix>-31`` in the store's namespace, one per UTC day in turn
(the day's ordinal modulo 32), each holding its day and that day's records, one key each. A
store is reused 32 days later, starting empty: retention needs no list and no delete, and the
app's Role names the 32 ConfigMaps (the chart creates them, so it needs no create either).
Chosen over SQLite on a volume (one replica only) and a CRD (an install step and an API group of
its own): ConfigMaps need nothing but a Role, outlive restarts and Events' one hour, and several
replicas merge into them (``ConfigMapDoc``) without losing or doubling a record, since one
change has one key everywhere.

The node watch hands each node event whose extended capacity or allocatable moved
(``observe``), with its raw bytes: only then are ``managedFields`` decoded, so a heartbeat costs
one comparison. This dashboard's writes add the signed-in user (``own``). Records wait in a
bounded queue and a background thread merges them into their day's ConfigMap every second; a
failed write is kept and tried again with the next batch (a merge of the same keys: writing it
twice gives the same). Reads get the 32 ConfigMaps, kept for a few seconds, show the days of the
last ``keep_days``, and leave out records not sealed by this app.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING

from app.base import workers
from app.domain.accounting import extended_only
from app.domain.capacity_log import (
    DAY_KEY,
    SLOTS,
    Record,
    attributed,
    decode,
    including,
    merged_store,
    moved,
    newest_first,
    slot,
)
from app.kube.api.configmap_doc import ConfigMapDoc
from app.kube.api.errors import BadRequest, Invalid, KubeError, TooLarge
from app.kube.api.kept import KeptRead
from app.kube.wire.managed_fields import managed
from app.kube.wire.projections import NodeView

if TYPE_CHECKING:
    from kubernetes import client

log = logging.getLogger(__name__)
LABELS = {"app.kubernetes.io/managed-by": "extres", "app.kubernetes.io/component": "capacity-log"}
QUEUE = 10_000  # records waiting to be written at most (a flood beyond is dropped and counted)
KEPT_SECONDS = 5.0
FIELD_MANAGER = "extres"
# a write refused for what it is, not for now: never retried
REFUSED_FOR_GOOD = (BadRequest, TooLarge, Invalid)


def _extended(view: NodeView) -> dict[str, dict[str, int]]:
    return {"capacity": extended_only(view.capacity), "allocatable": extended_only(view.allocatable)}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CapacityLog:
    def __init__(
        self,
        api: client.ApiClient | None,
        store: str | None,
        keys: Sequence[str],
        *,
        timeout: float = 10.0,
        keep_days: int = 31,
        interval: float = 1.0,
        unreachable: Callable[[], bool] = lambda: False,
        cluster: str = "",
    ) -> None:
        """``store``: ``namespace/prefix`` of the day ConfigMaps; None keeps no history.
        ``cluster``: the member cluster whose changes this log records and reads, in the store of
        the cluster ``api`` reaches (the dashboard's own); "" for that cluster's own.
        ``keys``: the history's key, then keys it replaced (read only); with no key (or an empty
        first one) nothing is written, and ``problem`` says why."""
        self.namespace, _, self.prefix = (store or "/").partition("/")
        self.cluster = cluster
        self.keys = tuple(k for k in keys if k)
        self.writes = bool(keys and keys[0])
        # None: no history store at all; without a key the store is still read, to count what it
        # keeps that this dashboard cannot read (a second dashboard without the chart's key)
        self._api = api if api is not None and store else None
        self.timeout = timeout
        self.keep_days = keep_days
        self.interval = interval
        self._queue: deque[Record] = deque()
        self._writing: list[Record] = []  # the batch being written: still shown by reads
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.dropped = 0  # records not written: a full queue, a full day
        self._refused_now = 0
        self.problem: str | None = None  # the last write's failure, until one succeeds
        if store and not self.writes:
            self.problem = "changes are not recorded: EXTRES_HISTORY_KEY is not set"
        self._reads = KeptRead(self._read_all, KEPT_SECONDS, unreachable, "capacity history")

    @property
    def enabled(self) -> bool:
        """Whether a history is kept and read here (a store and a key to read it with)."""
        return self._api is not None and bool(self.keys)

    # ---- recording ------------------------------------------------------------------------
    def observe(self, old: NodeView | None, new: NodeView, raw: bytes) -> None:
        """A node event: record each extended amount that moved since ``old``."""
        if self._api is None or not self.writes or old is None:
            return
        if old.capacity == new.capacity and old.allocatable == new.allocatable:
            return  # a heartbeat, a label: one comparison
        changes = moved(_extended(old), _extended(new))
        if not changes:
            return
        entries = managed(raw)
        seen = _now()
        for field, resource, before, after in changes:
            manager, at = attributed(entries, field, resource, seen)
            self._put(
                Record(
                    at,
                    new.name,
                    field,
                    resource,
                    before,
                    after,
                    manager,
                    "",
                    new.resource_version,
                    self.cluster,
                )
            )

    def own(
        self, node: str, resource: str, before: int | None, after: int | None, user: str, version: str
    ) -> None:
        """This dashboard's own write of a node's capacity: the same change the watch will see,
        with the signed-in user."""
        if self._api is not None and self.writes:
            self._put(
                Record(
                    _now(),
                    node,
                    "capacity",
                    resource,
                    before,
                    after,
                    FIELD_MANAGER,
                    user[:256],
                    version,
                    self.cluster,
                )
            )

    def _put(self, record: Record) -> None:
        with self._lock:
            if len(self._queue) >= QUEUE:
                self.dropped += 1
                self.problem = f"{self.dropped} changes not recorded: too many were waiting to be written"
                return
            self._queue.append(record)

    # ---- writing ----------------------------------------------------------------------------
    def start(self) -> None:
        with self._start_lock:  # the cluster starts it once; a second call starts nothing
            if self._api is None or not self.writes or self._thread is not None:
                return
            self._thread = workers.every("capacity-log", self.interval, self.flush, self._stop)

    def stop(self) -> None:
        """No more rounds; what waits is written now (the worker's graceful exit calls this:
        a change made just before it must not be lost), once a round under way is done."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(3.0)
        if self._api is not None and self._queue:
            self.flush()

    def flush(self) -> None:
        """Merge what waits into each day's ConfigMap; what could not be written waits again."""
        with self._lock:
            batch, self._queue = list(self._queue), deque()
            self._writing = batch
        by_day: dict[str, list[Record]] = {}
        for r in batch:
            by_day.setdefault(r.day, []).append(r)
        failed: list[Record] = []
        for day, records in sorted(by_day.items()):
            try:
                self._refused_now = 0
                self._doc(day).merge(partial(self._merged, day=day, records=records), f"The history of {day}")
                self.problem = None
                if self._refused_now:
                    self.dropped += self._refused_now
                    log.warning(
                        "capacity history of %s is full: %d changes not recorded", day, self._refused_now
                    )
                    self.problem = f"the history of {day} is full: {self.dropped} changes not recorded"
            except KubeError as err:
                log.warning("capacity history for %s not written: %s [%s]", day, err.message, err.detail)
                self.problem = err.message
                if isinstance(err, REFUSED_FOR_GOOD):  # the same write would be refused again
                    self.dropped += len(records)
                    self.problem = f"{len(records)} changes not recorded: {err.message}"
                else:
                    failed.extend(records)
        if failed:
            with self._lock:
                room = QUEUE - len(self._queue)
                self._queue.extendleft(reversed(failed[:room]))
                if len(failed) > room:
                    self.dropped += len(failed) - room
        if batch and not failed:
            self._reads.expire()  # the next read reads again, and sees what was written
        with self._lock:
            self._writing = []  # written, waiting again, or counted as not recorded

    def name(self, index: int) -> str:
        """The ConfigMap of store ``index`` (0 to SLOTS - 1)."""
        return f"{self.prefix}-{index:02d}"

    def _doc(self, day: str) -> ConfigMapDoc:
        assert self._api is not None
        return ConfigMapDoc(self._api, self.namespace, self.name(slot(day)), self.timeout, LABELS)

    def _merged(self, data: dict[str, str], *, day: str, records: list[Record]) -> dict[str, str]:
        out, refused = merged_store(data, day, records, self.keys)
        if refused:  # a merge may run again on a conflict: the last run's count is the one
            self._refused_now = len(refused)
        return out

    # ---- reading ----------------------------------------------------------------------------
    def read(self, since: str = "", until: str = "") -> Kept:
        """Records of the days from ``since`` to ``until`` (YYYY-MM-DD, inclusive; "" for no
        bound), newest first, with the changes this process has yet to write; read at most once
        per ``KEPT_SECONDS`` and never waited on once read (``KeptRead``: marked stale while the
        API server does not answer)."""
        if self._api is None:
            return Kept([], 0, False)
        (stored, left_out), stale = self._reads.get()  # without a key: every record left out
        with self._lock:
            waiting = [*self._writing, *self._queue]
        records = including(stored, waiting) if waiting else stored
        shown = [
            r
            for r in records
            if r.cluster == self.cluster and (not since or r.day >= since) and (not until or r.day <= until)
        ]
        return Kept(shown, left_out, stale)

    def _read_all(self) -> tuple[list[Record], int]:
        assert self._api is not None
        oldest = (datetime.now(UTC) - timedelta(days=self.keep_days)).strftime("%Y-%m-%d")
        records, left_out = [], 0
        for index in range(SLOTS):
            data, _ = ConfigMapDoc(self._api, self.namespace, self.name(index), self.timeout).read()
            day = data.pop(DAY_KEY, "")
            if day < oldest:
                continue  # not made yet, or a day past retention (its store not yet reused)
            for text in data.values():
                r = decode(text, self.keys)
                if r is None or r.day != day:
                    left_out += 1  # not sealed by this app, or moved to another day
                else:
                    records.append(r)
        return newest_first(records), left_out


@dataclass(frozen=True)
class Kept:
    records: list[Record]
    left_out: int  # records in the store not sealed by this app
    stale: bool  # the last read, kept while the API server does not answer
