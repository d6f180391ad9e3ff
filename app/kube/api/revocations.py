"""Sessions ended by sign-out, shared by every replica through one ConfigMap.

Signing out adds the session's id (hashed: the ConfigMap holds no usable secret) to the
ConfigMap's ``revoked`` entry, with the time the session would have ended anyway; entries past
that time are dropped at the next write, and none before it: past MAX_ENTRIES live entries new
sign-ins wait (``full``), so the sessions that may still sign out have room. Each replica
re-reads the ConfigMap every ``refresh`` seconds in a background thread (a GET, never on a
request's path), so a copied cookie stops working at once on the replica that signed out and
within ``refresh`` seconds on the others.

A write is a merge into the ConfigMap (``app.kube.api.configmap_doc``: read-modify-write with the
resourceVersion, redone on what another replica wrote; adding an id twice changes nothing).
Without a ConfigMap (one replica, the demo) the list is kept in memory only. Until the list has
been read once, no session can be verified (fail closed).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.base import workers
from app.domain.numbers import bounded_int
from app.kube.api.configmap_doc import ConfigMapDoc
from app.kube.api.errors import KubeError, Unavailable

if TYPE_CHECKING:
    from kubernetes import client

log = logging.getLogger(__name__)

KEY = "revoked"
# live sign-outs before new sign-ins wait: every session that may still sign out then has room
# (~45 bytes an entry; a ConfigMap holds 1 MiB, MAX_STORED of them with room to spare)
MAX_ENTRIES = 10_000
MAX_STORED = 20_000  # past this a sign-out is not recorded (the page says until when a copy lives)
UNVERIFIABLE = "Your session cannot be verified now (the API server does not answer); try again shortly."
FULL = (
    "Sign-in is paused: {count:,} signed-out sessions are still within their lifetime, the most the "
    "shared sign-out list keeps. It reopens as they expire (sessions last at most 12 hours)."
)


def digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()[:32]


def parse(text: str) -> tuple[dict[str, int], int]:
    """``<digest> <until>`` lines, and how many lines were not such (skipped, never fatal)."""
    out: dict[str, int] = {}
    skipped = 0
    for line in text.splitlines()[: MAX_STORED * 2]:
        parts = line.split()
        until = bounded_int(parts[1], 0) if len(parts) == 2 and len(parts[0]) == 32 else None
        if until is not None:
            out[parts[0]] = until
        elif line.strip():
            skipped += 1
    return out, skipped


def live(entries: dict[str, int], now: float) -> dict[str, int]:
    """The entries whose sessions have not yet ended: never dropped before that."""
    return {d: u for d, u in entries.items() if u > now}


def render(entries: dict[str, int]) -> str:
    return "".join(f"{d} {u}\n" for d, u in sorted(entries.items(), key=lambda e: e[1]))


class Full(KubeError):
    """The sign-out list holds as many live entries as it may: a new sign-out cannot be kept."""

    status = 503
    title = "Sign-out not recorded"


class Revocations:
    def __init__(
        self,
        api: client.ApiClient | None,
        store: str | None,
        *,
        timeout: float = 10.0,
        refresh: float = 2.0,
        unreachable: Callable[[], bool] = lambda: False,
    ) -> None:
        """``store`` is ``namespace/name`` of the ConfigMap, or None to keep revocations in memory."""
        self.namespace, _, self.name = (store or "/").partition("/")
        self._doc = (
            ConfigMapDoc(api, self.namespace, self.name, timeout) if api is not None and store else None
        )
        self.timeout = timeout
        self.refresh = refresh
        self.unreachable = unreachable  # True while the API server is known not to answer
        self._shared: dict[str, int] = {}  # as last read from the ConfigMap
        self._local: dict[str, int] = {}  # signed out here (kept even when the write failed)
        self._loaded = self._doc is None
        self.skipped = 0  # lines of the shared list that were not entries, at the last read
        self.read_at: float | None = None if self._doc is not None else time.time()  # last good read
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def start(self) -> None:
        with self._start_lock:  # two first requests at once start one reader
            if self._doc is None or self._thread is not None:
                return
            self._thread = workers.every("revocations", self.refresh, self._reload, self._stop)

    def stop(self) -> None:
        self._stop.set()

    def revoked(self, session_id: str) -> bool:
        """Whether the session was signed out; raises Unavailable before the list was first read."""
        if not self._loaded:  # read here once; the reader the cluster's start began keeps it
            if not self.unreachable():
                self._reload()
            if not self._loaded:
                raise Unavailable(UNVERIFIABLE, 503)
        key = digest(session_id)
        with self._lock:
            until = max(self._shared.get(key, 0), self._local.get(key, 0))
        return until > time.time()

    def full(self) -> str | None:
        """Why a new sign-in must wait (the list holds MAX_ENTRIES live sign-outs), or None."""
        now = time.time()
        with self._lock:
            count = len(live({**self._shared, **self._local}, now))
        return FULL.format(count=count) if count >= MAX_ENTRIES else None

    def revoke(self, session_id: str, until: float) -> None:
        """Record a sign-out; raises KubeError when the shared list could not be written (Full
        when it holds MAX_STORED live entries: none is ever dropped to make room)."""
        key, until_s = digest(session_id), int(until) + 1
        now = time.time()
        with self._lock:
            self._local = live(self._local, now)
            self._local[key] = until_s
        if self._doc is None:
            return

        def add(data: dict[str, str]) -> dict[str, str]:
            entries = live(parse(data.get(KEY, ""))[0], time.time())
            if key not in entries and len(entries) >= MAX_STORED:
                raise Full(f"The shared sign-out list is full ({len(entries):,} live sign-outs).")
            entries[key] = until_s
            return {**data, KEY: render(entries)}

        written = self._doc.merge(add, "The sign-out")
        entries, skipped = parse(written[KEY])
        with self._lock:
            self._shared, self.skipped = entries, skipped
        self._loaded, self.read_at = True, time.time()

    def _reload(self) -> None:
        assert self._doc is not None
        try:
            data, _ = self._doc.read()
            entries, skipped = parse(data.get(KEY, ""))
        except KubeError as exc:
            log.warning(
                "could not read the session revocations %s/%s: %s", self.namespace, self.name, exc.message
            )
            return
        if skipped:
            log.warning("session revocations %s/%s: %d lines skipped", self.namespace, self.name, skipped)
        with self._lock:
            self._shared, self.skipped = entries, skipped
        self._loaded, self.read_at = True, time.time()
