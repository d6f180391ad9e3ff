"""An API server stand-in for the web lane: the real ``NodeWriter`` talks to it through the
client's two calls that ``app.kube.api.raw`` makes (``param_serialize``, ``call_api``), so a
form's JSON Patch, its test operations and its audit line are checked without a control plane.

It holds the fake cluster's node JSON (``FakeCluster.objects``): a GET answers a node as held; a
PATCH of ``/status`` applies the JSON Patch (RFC 6902, the jsonpatch library) to it, a failed
``test`` answering 422 as kube-apiserver does, and bumps its resourceVersion; an Event's POST is
kept. Every request is recorded (method, path, query, body). The API semantics themselves
(what kube-apiserver accepts) are tested against the real one in tests/integration."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import jsonpatch


@dataclass
class Sent:
    method: str
    path: str
    query: dict[str, str]
    body: Any


class _Answer:
    """What urllib3 hands the client: a status, a body, headers."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.reason = "OK" if status < 300 else "Error"
        self.data = json.dumps(body).encode()
        self.response = self
        self.headers = {"Content-Type": "application/json"}

    def read(self) -> bytes:
        return self.data

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        yield self.data

    def release_conn(self) -> None:
        pass

    def getheaders(self) -> dict[str, str]:
        return self.headers

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return self.getheaders().get(name, default)


@dataclass
class ApiServerStandIn:
    objects: dict[str, dict[str, Any]]  # node name -> its JSON, as the fake cluster holds it
    sent: list[Sent] = field(default_factory=list)
    gate: threading.Semaphore | None = None  # when set, each PATCH waits for a release
    failing: set[str] = field(default_factory=set)  # nodes whose PATCH answers 500
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # the two calls app.kube.api.raw makes of the client
    def param_serialize(self, method: str, path: str, query_params: Any = None, **_: Any) -> tuple:
        query = "&".join(f"{k}={v}" for k, v in (query_params or []))
        return method, path + (f"?{query}" if query else ""), {}, None, []

    def call_api(self, method: str, url: str, body: Any = None, **_: Any) -> _Answer:
        parts = urlsplit(url)
        if method == "PATCH" and self.gate is not None:
            self.gate.acquire(timeout=10)  # recorded once let through
        sent = Sent(method, parts.path, dict(parse_qsl(parts.query)), copy.deepcopy(body))
        with self._lock:
            self.sent.append(sent)
        if method == "POST" and parts.path.endswith("/events"):
            return _Answer(201, body)
        name = unquote(parts.path.split("/api/v1/nodes/", 1)[-1].split("/", 1)[0])
        if name not in self.objects:
            return _Answer(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
        if method == "GET":
            return _Answer(200, self.objects[name])
        if method == "PATCH" and parts.path.endswith("/status"):
            return self._patch(name, body, sent.query.get("dryRun") == "All")
        return _Answer(405, {"kind": "Status", "code": 405})

    def _patch(self, name: str, ops: list[dict[str, Any]], dry_run: bool) -> _Answer:
        if name in self.failing:
            return _Answer(500, {"kind": "Status", "code": 500, "message": "etcd is away"})
        try:
            patched = jsonpatch.apply_patch(self.objects[name], ops)
        except jsonpatch.JsonPatchTestFailed:
            message = "the server rejected our request due to an error in our request: testing value"
            return _Answer(422, {"kind": "Status", "code": 422, "reason": "Invalid", "message": message})
        meta = patched["metadata"]
        meta["resourceVersion"] = str(int(meta.get("resourceVersion") or 0) + 1)
        if not dry_run:
            self.objects[name] = patched
        return _Answer(200, patched)

    def patches(self, name: str | None = None) -> list[tuple[str, bool, list[dict[str, Any]]]]:
        """The JSON Patches sent (for ``name``'s status), in order: (node, dry run, operations)."""
        out = []
        for s in self.sent:
            if s.method == "PATCH" and s.path.endswith("/status"):
                node = unquote(s.path.split("/")[-2])
                if name is None or node == name:
                    out.append((node, s.query.get("dryRun") == "All", s.body))
        return out

    def written(self) -> list[str]:
        """The nodes patched (not dry runs), in order."""
        return [node for node, dry, _ in self.patches() if not dry]
