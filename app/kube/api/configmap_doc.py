"""One ConfigMap as a small shared document that several replicas update: read-modify-write with
the resourceVersion. A 409 means another writer came in between; the change is applied again to
what it wrote (changes here are merges: applying one twice gives the same), a few times at most,
after a random pause so that writers do not keep colliding. Never a blind retry."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from app.kube.api import paths, raw
from app.kube.api.errors import Conflict, NotFound, Unavailable, translate

if TYPE_CHECKING:
    from kubernetes import client

MERGES = 8  # rounds lost to other writers before giving up


class ConfigMapDoc:
    def __init__(
        self,
        api: client.ApiClient,
        namespace: str,
        name: str,
        timeout: float,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.api, self.namespace, self.name = api, namespace, name
        self.timeout = timeout
        self.labels = dict(labels or {})

    @property
    def _path(self) -> str:
        return paths.path("v1", "namespaces", self.namespace, "configmaps")

    def read(self) -> tuple[dict[str, str], str | None]:
        """The data and its resourceVersion; ({}, None) when the ConfigMap does not exist."""
        data, version, _ = self._get()
        return data, version

    def _get(self) -> tuple[dict[str, str], str | None, dict[str, Any]]:
        """The data, its resourceVersion and the metadata a replace keeps (labels, annotations)."""
        try:
            cm: dict[str, Any] = raw.call(
                self.api,
                "GET",
                paths.path("v1", "namespaces", self.namespace, "configmaps", self.name),
                self.timeout,
            )
        except Exception as exc:
            err = translate(exc)
            if isinstance(err, NotFound):
                return {}, None, {}
            raise err from exc
        meta = cm.get("metadata") or {}
        kept = {"labels": dict(meta.get("labels") or {}), "annotations": dict(meta.get("annotations") or {})}
        return dict(cm.get("data") or {}), meta.get("resourceVersion"), kept

    def write(
        self, data: Mapping[str, str], version: str | None, kept: Mapping[str, Any] | None = None
    ) -> None:
        """Create it (``version`` None) or replace the version read, keeping the labels and
        annotations it had (``kept``: a chart's own); raises Conflict on a 409."""
        kept = kept or {}
        meta: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "labels": {**self.labels, **kept.get("labels", {})},  # a chart's own labels stay
        }
        if kept.get("annotations"):
            meta["annotations"] = dict(kept["annotations"])
        body: Any = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data)}
        try:
            if version is None:
                raw.call(self.api, "POST", self._path, self.timeout, payload=body)
            else:
                body["metadata"]["resourceVersion"] = version
                path = paths.path("v1", "namespaces", self.namespace, "configmaps", self.name)
                raw.call(self.api, "PUT", path, self.timeout, payload=body)
        except Exception as exc:
            raise translate(exc) from exc  # Conflict: a stale resourceVersion, or created meanwhile

    def merge(self, change: Callable[[dict[str, str]], dict[str, str]], what: str) -> dict[str, str]:
        """Apply ``change`` to the current data and write it; what was written. ``what`` names
        the document in the message when other writers keep winning."""
        for attempt in range(MERGES):
            if attempt:
                time.sleep(random.uniform(0, 0.05 * attempt))
            current, version, kept = self._get()
            data = change(current)
            try:
                self.write(data, version, kept)
                return data
            except Conflict:
                continue
        raise Unavailable(f"{what} could not be written: it kept changing.", 503)
