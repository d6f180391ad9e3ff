"""Sessions ended by sign-out, shared by every replica through one ConfigMap.

Signing out adds the session's id (hashed: the ConfigMap holds no usable secret) to the
ConfigMap's ``revoked`` entry, with the time the session would have ended anyway; entries past
that time are dropped at the next write. Each replica re-reads the ConfigMap every ``refresh``
seconds in a background thread (a GET, never on a request's path), so a copied cookie stops
working at once on the replica that signed out and within ``refresh`` seconds on the others.

A write is a merge into the ConfigMap (``app.kube.configmap_doc``: read-modify-write with the
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

from kubernetes import client

from app.kube.configmap_doc import ConfigMapDoc
from app.kube.errors import KubeError, Unavailable

log = logging.getLogger(__name__)

KEY = "revoked"
MAX_ENTRIES = 10_000  # ~45 bytes each: far below a ConfigMap's 1 MiB
UNVERIFIABLE = "Your session cannot be verified now (the API server does not answer); try again shortly."


def digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()[:32]


def parse(text: str) -> dict[str, int]:
    """``<digest> <until>`` lines; anything else is skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines()[: MAX_ENTRIES * 2]:
        parts = line.split()
        if len(parts) == 2 and len(parts[0]) == 32 and parts[1].isascii() and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def prune(entries: dict[str, int], now: float, keep: int = MAX_ENTRIES) -> dict[str, int]:
    """The entries not yet ended; past ``keep`` of them, those ending last (logged: a flood of
    sign-outs would otherwise grow the list without end)."""
    live = sorted(((u, d) for d, u in entries.items() if u > now), reverse=True)
    if len(live) > keep:
        log.warning("session revocations: %d live entries, keeping the %d ending last", len(live), keep)
    return {d: u for u, d in live[:keep]}


def render(entries: dict[str, int]) -> str:
    return "".join(f"{d} {u}\n" for d, u in sorted(entries.items(), key=lambda e: e[1]))


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
            ConfigMapDoc(client.CoreV1Api(api), self.namespace, self.name, timeout)
            if api is not None and store
            else None
        )
        self.timeout = timeout
        self.refresh = refresh
        self.unreachable = unreachable  # True while the API server is known not to answer
        self._shared: dict[str, int] = {}  # as last read from the ConfigMap
        self._local: dict[str, int] = {}  # signed out here (kept even when the write failed)
        self._loaded = self._doc is None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._doc is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="extres-revocations", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def revoked(self, session_id: str) -> bool:
        """Whether the session was signed out; raises Unavailable before the list was first read."""
        if not self._loaded:
            self.start()
            if not self.unreachable():
                self._reload()
            if not self._loaded:
                raise Unavailable(UNVERIFIABLE, 503)
        key = digest(session_id)
        with self._lock:
            until = max(self._shared.get(key, 0), self._local.get(key, 0))
        return until > time.time()

    def revoke(self, session_id: str, until: float) -> None:
        """Record a sign-out; raises KubeError when the shared list could not be written."""
        key, until_s = digest(session_id), int(until) + 1
        with self._lock:
            self._local[key] = until_s
            self._local = prune(self._local, time.time())
        if self._doc is None:
            return

        def add(data: dict[str, str]) -> dict[str, str]:
            entries = parse(data.get(KEY, ""))
            entries[key] = until_s
            return {**data, KEY: render(prune(entries, time.time()))}

        written = self._doc.merge(add, "The sign-out")
        with self._lock:
            self._shared = parse(written[KEY])
        self._loaded = True

    def _reload(self) -> None:
        assert self._doc is not None
        try:
            data, _ = self._doc.read()
            entries = parse(data.get(KEY, ""))
        except KubeError as exc:
            log.warning(
                "could not read the session revocations %s/%s: %s", self.namespace, self.name, exc.message
            )
            return
        with self._lock:
            self._shared = entries
        self._loaded = True

    def _run(self) -> None:
        while not self._stop.wait(self.refresh):
            self._reload()
