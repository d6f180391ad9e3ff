"""Sessions ended by sign-out, shared by every replica through one ConfigMap.

Signing out adds the session's id (hashed: the ConfigMap holds no usable secret) to the
ConfigMap's ``revoked`` entry, with the time the session would have ended anyway; entries past
that time are dropped at the next write. Each replica re-reads the ConfigMap every ``refresh``
seconds in a background thread (a GET, never on a request's path), so a copied cookie stops
working at once on the replica that signed out and within ``refresh`` seconds on the others.

A write is read-modify-write with the resourceVersion. A 409 means another replica wrote in
between; the merge is redone on what it wrote (adding an id twice changes nothing), never a
blind retry. Without a ConfigMap (one replica, the demo) the list is kept in memory only.
Until the list has been read once, no session can be verified (fail closed).
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client

from app.kube.errors import Conflict, KubeError, NotFound, Unavailable, translate

log = logging.getLogger(__name__)

KEY = "revoked"
MAX_ENTRIES = 10_000  # ~45 bytes each: far below a ConfigMap's 1 MiB
MERGES = 8  # read-modify-write rounds lost to other replicas before giving up
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
        self._core = client.CoreV1Api(api) if api is not None and store else None
        self.namespace, _, self.name = (store or "/").partition("/")
        self.timeout = timeout
        self.refresh = refresh
        self.unreachable = unreachable  # True while the API server is known not to answer
        self._shared: dict[str, int] = {}  # as last read from the ConfigMap
        self._local: dict[str, int] = {}  # signed out here (kept even when the write failed)
        self._loaded = self._core is None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._core is None or self._thread is not None:
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
        if self._core is None:
            return
        for attempt in range(MERGES):
            if attempt:  # lost a race: let the other writer finish, a random while (no lockstep)
                time.sleep(random.uniform(0, 0.05 * attempt))
            current, version = self._read()
            current[key] = until_s
            try:
                self._write(current, version)
                return
            except Conflict:
                continue  # another replica wrote in between: merge again onto what it wrote
        raise Unavailable("The sign-out could not be recorded: the session list kept changing.", 503)

    def _read(self) -> tuple[dict[str, int], str | None]:
        assert self._core is not None
        try:
            cm: Any = self._core.read_namespaced_config_map(
                self.name, self.namespace, _request_timeout=self.timeout
            )
        except Exception as exc:
            err = translate(exc)
            if isinstance(err, NotFound):
                return {}, None
            raise err from exc
        return parse((cm.data or {}).get(KEY, "")), cm.metadata.resource_version

    def _write(self, entries: dict[str, int], version: str | None) -> None:
        assert self._core is not None
        body: Any = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "data": {KEY: render(prune(entries, time.time()))},
        }
        try:
            if version is None:
                self._core.create_namespaced_config_map(self.namespace, body, _request_timeout=self.timeout)
            else:
                body["metadata"]["resourceVersion"] = version
                self._core.replace_namespaced_config_map(
                    self.name, self.namespace, body, _request_timeout=self.timeout
                )
        except Exception as exc:
            err = translate(exc)
            if err.status == 409:  # stale resourceVersion, or created meanwhile
                raise Conflict(err.message) from exc
            raise err from exc
        with self._lock:
            self._shared = parse(body["data"][KEY])
        self._loaded = True

    def _reload(self) -> None:
        try:
            entries, _ = self._read()
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
