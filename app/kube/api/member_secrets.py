"""Member clusters' kubeconfigs from the Secrets of one namespace that carry a label (as Argo CD
keeps its clusters): each Secret's ``kubeconfig`` entry, named by its ``name`` entry or else by
the Secret's own name. Read with the dashboard's own account on its own cluster, a page of a few
Secrets at a time: only the labelled ones are asked for, each page's bytes bounded, at most
``most`` Secrets. What is read is the kubeconfig's bytes alone, handed to
app.domain.member_kubeconfig to be read as hostile; nothing of it is logged.

Why not a watch: a handful of objects that change by hand, re-read every few seconds by one
labelled list, is simpler than a watch's resume and relist, and needs no more rights (list)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from app.domain.member_kubeconfig import MAX_BYTES
from app.kube.api import raw
from app.kube.api.errors import translate

if TYPE_CHECKING:
    from kubernetes import client

PAGE = 5  # Secrets a page
PAGE_BYTES = PAGE * 1536 * 1024  # a Secret is at most ~1 MiB, ~1.4 MiB as base64 in JSON
TIMEOUT = (5.0, 10.0)


class MemberSecrets:
    def __init__(self, api: Callable[[], client.ApiClient], namespace: str, selector: str, most: int) -> None:
        self.api, self.namespace, self.selector, self.most = api, namespace, selector, most

    def read(self) -> list[tuple[str, bytes]]:
        """Each labelled Secret's (cluster name, kubeconfig bytes), by Secret name; a Secret
        without a ``kubeconfig`` entry gives empty bytes (refused where it is read). Past ``most``
        Secrets the rest are not read. Raises KubeError when the list cannot be read whole."""
        found: list[tuple[str, bytes]] = []
        query: dict[str, Any] = {"labelSelector": self.selector, "limit": PAGE}
        path = f"/api/v1/namespaces/{self.namespace}/secrets"
        try:
            while len(found) < self.most:
                page = orjson.loads(raw.body(raw.get(self.api(), path, query, TIMEOUT), PAGE_BYTES))
                found += [_entry(item) for item in page.get("items") or []]
                query["continue"] = (page.get("metadata") or {}).get("continue")
                if not query["continue"]:
                    break
        except Exception as exc:  # noqa: BLE001 - a refusal, a timeout, a page too long or not JSON
            raise translate(exc) from None  # a KubeError as it is
        return found[: self.most]


def _entry(item: dict[str, Any]) -> tuple[str, bytes]:
    """(name, kubeconfig); the name cut at 64 characters (a cluster's is at most 63: a longer
    one is still refused, and no more of it reaches a message or the log), the kubeconfig at one
    byte past the largest read (still refused for its size, and no more of it held)."""
    data = item.get("data") or {}
    given = data.get("name")
    name = _decoded(given[:128] if isinstance(given, str) else None).decode(errors="replace").strip()
    named = name or str((item.get("metadata") or {}).get("name", ""))
    return named[:64], _decoded(data.get("kubeconfig"))[: MAX_BYTES + 1]


def _decoded(value: object) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""
