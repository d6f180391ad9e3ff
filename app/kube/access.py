"""Acting as the user: API clients per identity, and SelfSubjectAccessReview checks.

* service-account: the app's own client.
* impersonate: the app's client plus ``Impersonate-User`` and one
  ``Impersonate-Group`` header per group, so Kubernetes RBAC decides.
* token: a client that sends the user's own bearer token.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from urllib3 import HTTPHeaderDict

from app.kube.client import api_client
from app.kube.errors import translate

log = logging.getLogger(__name__)
CHECK_TTL = 30.0
CLIENTS_KEPT = 64


@dataclass(frozen=True)
class Identity:
    user: str | None = None  # None: the app's own identity (service-account mode) or nobody
    groups: tuple[str, ...] = ()
    token: str | None = None  # token mode only; never logged
    mode: str = "service-account"

    @property
    def known(self) -> bool:
        return self.mode == "service-account" or bool(self.user or self.token)

    @property
    def label(self) -> str:
        if self.mode == "service-account":
            return "the dashboard's service account"
        return self.user or "token user"


class _Impersonating:
    """Wraps a urllib3 pool manager to add impersonation headers (repeated per group)."""

    def __init__(self, pool: Any, user: str, groups: tuple[str, ...]) -> None:
        self._pool, self._user, self._groups = pool, user, groups

    def request(self, method: str, url: str, headers: Any = None, **kwargs: Any) -> Any:
        h = HTTPHeaderDict(headers or {})
        h["Impersonate-User"] = self._user
        for group in self._groups:
            h.add("Impersonate-Group", group)
        return self._pool.request(method, url, headers=h, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


class Access:
    def __init__(self, configuration: client.Configuration, base: client.ApiClient) -> None:
        self.configuration = configuration
        self.base = base
        self._clients: OrderedDict[tuple[Any, ...], client.ApiClient] = OrderedDict()
        self._checks: dict[tuple[Any, ...], tuple[float, bool]] = {}
        self._lock = threading.Lock()

    def client_for(self, identity: Identity) -> client.ApiClient:
        if identity.mode == "service-account":
            return self.base
        key = (identity.mode, identity.user, identity.groups, identity.token)
        with self._lock:
            api = self._clients.get(key)
            if api is not None:
                self._clients.move_to_end(key)
                return api
        if identity.mode == "impersonate":
            if not identity.user:
                raise ValueError("impersonation needs a user")
            api = api_client(self.configuration)
            rest: Any = api.rest_client
            rest.pool_manager = _Impersonating(rest.pool_manager, identity.user, identity.groups)
        else:
            conf = copy.copy(self.configuration)
            conf.api_key = {"authorization": identity.token or ""}
            conf.api_key_prefix = {"authorization": "Bearer"}
            conf.cert_file = conf.key_file = None
            conf.username = conf.password = None
            conf.refresh_api_key_hook = None
            api = api_client(conf)
        with self._lock:
            self._clients[key] = api
            while len(self._clients) > CLIENTS_KEPT:
                self._clients.popitem(last=False)[1].close()
        return api

    def allowed(self, identity: Identity, verb: str, resource: str, subresource: str = "") -> bool:
        """SelfSubjectAccessReview as the acting user; cached briefly; False when unsure."""
        if not identity.known:
            return False
        key = (identity.mode, identity.user, identity.groups, identity.token, verb, resource, subresource)
        now = time.monotonic()
        cached = self._checks.get(key)
        if cached and now - cached[0] < CHECK_TTL:
            return cached[1]
        body: Any = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "subresource": subresource}},
        }
        try:
            api = client.AuthorizationV1Api(self.client_for(identity))
            review: Any = api.create_self_subject_access_review(body, _request_timeout=10)
            ok = bool(review.status and review.status.allowed)
        except Exception as exc:  # noqa: BLE001 - a failed check means "not allowed"
            log.warning("access check for %s failed: %s", identity.label, translate(exc).message)
            return False
        self._checks[key] = (now, ok)
        return ok

    def can_edit(self, identity: Identity) -> bool:
        return self.allowed(identity, "patch", "nodes", "status")

    def close(self) -> None:
        with self._lock:
            for api in self._clients.values():
                api.close()
            self._clients.clear()
