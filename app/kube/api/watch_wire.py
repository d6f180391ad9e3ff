"""The watch's wire: an event decoded (its object left raw until its kind's reader takes it), an
ERROR event raised as what it means, the API server's version read, and a blocked read undone."""

from __future__ import annotations

import contextlib
import logging
import socket
from typing import Any

import msgspec
from kubernetes import client

from app.domain.numbers import bounded_int
from app.kube.api.errors import Gone, KubeError
from app.kube.api.raw import body, get

log = logging.getLogger(__name__)


class Event(msgspec.Struct):
    """A watch event; its object is decoded by kind, after the type is known."""

    type: str
    object: msgspec.Raw


EVENT = msgspec.json.Decoder(Event)


def raise_for(event: Event) -> None:
    """An ERROR event ends the watch: 410 as Gone (relist), any other code as an error."""
    if event.type != "ERROR":
        return
    status = msgspec.json.decode(event.object)
    code = status.get("code")
    if code == 410:
        raise Gone("The resource version is too old.", detail=str(status.get("message", "")))
    detail = str(status.get("message", ""))
    raise KubeError(f"The watch ended with an error ({code}).", int(code or 0), detail)


def server_minor(api: client.ApiClient, said: bool = False) -> int | None:
    """The API server's minor version ("37" of v1.37.2; "37+" from some providers), or None when
    /version cannot be read (the newest rules apply then; logged unless ``said`` already)."""
    try:
        minor = msgspec.json.decode(body(get(api, "/version", {}, (5, 10)))).get("minor")
        return bounded_int("".join(ch for ch in str(minor)[:8] if ch in "0123456789"))
    except Exception:  # noqa: BLE001 - any failure: unknown, and the newest rules
        (log.debug if said else log.info)(
            "the API server's version could not be read; counting as the newest version does"
        )
        return None


def abort(resp: Any) -> None:
    """Unblock a thread reading a watch: shut the socket down (close() would wait for its lock)."""
    sock = getattr(getattr(resp, "connection", None), "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
