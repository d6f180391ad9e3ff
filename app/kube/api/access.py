"""Acting as the user: API clients per identity, and SelfSubjectAccessReview checks.

* service-account: the app's own client.
* impersonate: the app's client plus ``Impersonate-User`` and one
  ``Impersonate-Group`` header per group, so Kubernetes RBAC decides.
* token: a client that sends the user's own bearer token.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from urllib3 import HTTPHeaderDict

from app.base.rate_window import MovingWindow
from app.kube.api import raw
from app.kube.api.client import api_client
from app.kube.api.errors import Busy, Forbidden, KubeError, Unauthorized, Unavailable, refused, translate

if TYPE_CHECKING:
    from kubernetes import client

log = logging.getLogger(__name__)
CHECK_TTL = 30.0
RECHECK_TIMEOUT = 1.0  # seconds a page waits to renew an answer it already has
CLIENTS_KEPT = 64
ACCEPTED_TTL = 30.0  # a token the API server accepted is trusted this long before asking again
REFUSED_TTL = 5.0  # and a refused one is refused this long without asking
TOKENS_KEPT = 1024
REVIEWS_PER_MINUTE = 120  # TokenReviews of tokens not known here, from every path together
REVIEWS_PER_CLIENT = 10  # of those, a minute, from one client address (through the trusted proxies)
TOO_MANY_UNKNOWN = (
    "Too many unknown tokens are being checked right now (a limit that protects the API server); "
    "try again in a minute. Tokens already accepted are not affected."
)
CHECKS_KEPT = 4096


@dataclass(frozen=True)
class Identity:
    user: str | None = None  # None: the app's own identity (service-account mode) or nobody
    groups: tuple[str, ...] = ()
    token: str | None = None  # token mode only; never logged
    mode: str = "service-account"

    @property
    def known(self) -> bool:
        """Someone is named: a user from the proxy, or a token (which must still be verified)."""
        return self.mode == "service-account" or bool(self.user or self.token)

    @property
    def key(self) -> tuple[str, str | None, tuple[str, ...], str | None]:
        """Who this is, for caches and CSRF binding: a token (which alone says who it is) only
        as its hash."""
        if self.token:
            return (self.mode, None, (), hashlib.sha256(self.token.encode()).hexdigest())
        return (self.mode, self.user, self.groups, None)

    @property
    def owner(self) -> tuple[str, str | None, tuple[str, ...], str | None]:
        """Whose work this is (bulk jobs): the user the API server named, whatever token or session
        they came with; a token whose user is unknown is its own owner."""
        if self.user:
            return (self.mode, self.user, (), None)
        return self.key

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


UNVERIFIABLE = (
    "Your access cannot be verified now: the API server is not answering. What this dashboard "
    "knows is shown to those it has verified recently; try again shortly."
)


class Access:
    def __init__(
        self,
        configuration: client.Configuration,
        base: client.ApiClient,
        timeout: float = 10.0,
        unreachable: Callable[[], bool] = lambda: False,
        reviews_per_minute: int = REVIEWS_PER_MINUTE,
    ) -> None:
        self.configuration = configuration
        self.base = base
        self.timeout = timeout  # per request (EXTRES_REQUEST_TIMEOUT)
        # True while the API server is known not to answer (its /readyz failing): then no review
        # is sent to wait out a timeout; answers already given stand, past their TTL too
        self.unreachable = unreachable
        self._clients: OrderedDict[tuple[Any, ...], client.ApiClient] = OrderedDict()
        self._checks: OrderedDict[tuple[Any, ...], tuple[float, bool]] = OrderedDict()
        # token hash -> (when, user): accepted and refused tokens kept apart, so that no stream of
        # refused ones ever pushes out a token accepted lately
        self._tokens: OrderedDict[str, tuple[float, str | None]] = OrderedDict()
        self._refused: OrderedDict[str, tuple[float, str | None]] = OrderedDict()
        self.accepted_ttl = ACCEPTED_TTL
        self._lock = threading.Lock()
        # the budget for tokens not in the cache above: a stream of random tokens (a sign-in form,
        # an Authorization header on any path) costs the API server at most this many reviews;
        # a moving window (app/base/rate_window.py)
        self._unknown = reviews_per_minute
        self._per_client = min(REVIEWS_PER_CLIENT, reviews_per_minute)
        self._budget = MovingWindow()

    def client_for(self, identity: Identity) -> client.ApiClient:
        if identity.mode == "service-account":
            return self.base
        key = identity.key
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

    def _review(
        self,
        identity: Identity,
        verb: str,
        resource: str,
        subresource: str = "",
        timeout: float | None = None,
        namespace: str = "",
    ) -> bool:
        """One SelfSubjectAccessReview as the acting user; raises KubeError when it cannot be made
        (Unauthorized for an identity the API server does not accept). ``resource`` is ``group/resource``
        outside the core group ("resource.k8s.io/resourceslices")."""
        group, _, name = resource.rpartition("/")
        body: Any = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {
                    "verb": verb,
                    "group": group,
                    "resource": name,
                    "subresource": subresource,
                    "namespace": namespace,  # "": every namespace
                }
            },
        }
        try:
            path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
            review = raw.call(self.client_for(identity), "POST", path, timeout or self.timeout, payload=body)
        except Exception as exc:
            raise translate(exc) from exc
        return bool((review.get("status") or {}).get("allowed"))

    def authenticate(self, identity: Identity, client: str | None = None) -> Identity | None:
        """The identity as the API server knows it, or None when it refuses it.

        Token mode: a TokenReview made as the app names the token's user (for pages and the audit
        log); where the app may not review tokens, a SelfSubjectAccessReview made with the token
        proves only that it is accepted. Cached by the token's hash: accepted for 30 s, refused for
        5 s, at most 1,024 of each (a refused one never pushes out an accepted one). A token not in
        the cache is reviewed only within a budget per client address (``REVIEWS_PER_CLIENT``) and
        one shared by every path (``reviews_per_minute``); past either, Busy (429), while cached
        ones still pass: one address's stream of random tokens spends its own budget first.
        Other modes name no token: the proxy vouches for the user
        (impersonate), or there is only the app (service-account). Raises KubeError when the API
        server cannot be asked."""
        if identity.mode != "token":
            return identity if identity.known else None
        if not identity.token:
            return None
        digest = identity.key[3]
        assert digest is not None
        now = time.monotonic()
        with self._lock:
            cached = self._tokens.get(digest) or self._refused.get(digest)
        if cached and now - cached[0] < (self.accepted_ttl if cached[1] is not None else REFUSED_TTL):
            user = cached[1]
        elif self.unreachable():
            if cached is None:
                raise Unavailable(UNVERIFIABLE, 503)
            user = cached[1]
        else:
            if cached is None and not self._within_budget(client):
                raise Busy(TOO_MANY_UNKNOWN)
            try:
                wait = min(self.timeout, RECHECK_TIMEOUT) if cached is not None else None
                user = self._review_token(identity, wait)
            except KubeError as exc:
                if cached is None or refused(exc):
                    raise
                return self._as_known(cached[1], identity)  # no answer in time: the last one stands
            with self._lock:
                kept, other = (
                    (self._tokens, self._refused) if user is not None else (self._refused, self._tokens)
                )
                other.pop(digest, None)
                kept[digest] = (now, user)
                kept.move_to_end(digest)
                while len(kept) > TOKENS_KEPT:
                    kept.popitem(last=False)
        return self._as_known(user, identity)

    def _within_budget(self, client: str | None) -> bool:
        """One more review of an unknown token: within its client's budget, then the shared one
        (a client past its own spends none of the shared budget). Clients whose address is not
        known (None: behind a proxy not named as trusted) share one budget of half the shared
        one, so strangers there can never spend what clients with known addresses need."""
        if client is None:
            if not self._budget.hit(max(1, self._unknown // 2), "token-reviews-from-unknown"):
                return False
        elif not self._budget.hit(self._per_client, "token-reviews-from", client):
            return False
        return self._budget.hit(self._unknown, "token-reviews")

    def accepted_lately(self, identity: Identity) -> bool:
        """Whether the API server accepted this token when last asked (it is in the cache, of at
        most 1,024 tokens): such a token passes the sign-in limits."""
        digest = identity.key[3]
        with self._lock:
            cached = self._tokens.get(digest) if digest else None
        return cached is not None and cached[1] is not None

    @staticmethod
    def _as_known(user: str | None, identity: Identity) -> Identity | None:
        if user is None:
            return None
        return Identity(user=user or None, token=identity.token, mode=identity.mode)

    def _review_token(self, identity: Identity, timeout: float | None = None) -> str | None:
        """The token's user name ('' when only its acceptance is known), or None when refused."""
        body: Any = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": identity.token},
        }
        try:
            path = "/apis/authentication.k8s.io/v1/tokenreviews"
            status = (
                raw.call(self.base, "POST", path, timeout or self.timeout, payload=body).get("status") or {}
            )
            if not status.get("authenticated"):
                return None
            return str((status.get("user") or {}).get("username") or "")
        except Exception as exc:
            err = translate(exc)
            if not isinstance(err, Forbidden):  # the app may not review tokens: asked another way below
                raise err from exc
        try:  # the app may not review tokens: ask with the token itself
            self._review(identity, "get", "nodes", timeout=timeout)
        except Unauthorized:  # the token itself is not accepted
            return None
        return ""

    def check(
        self, identity: Identity, verb: str, resource: str, subresource: str = "", namespace: str = ""
    ) -> bool:
        """Whether the acting user may do this, in ``namespace`` or ("") in every namespace
        (SelfSubjectAccessReview, cached 30 s). When the API server cannot be asked, the last
        answer stands; with none, raises KubeError."""
        if not identity.known:
            return False
        key = (*identity.key, verb, resource, subresource, namespace)
        now = time.monotonic()
        with self._lock:
            cached = self._checks.get(key)
        if cached and now - cached[0] < CHECK_TTL:
            return cached[1]
        if self.unreachable():
            if cached is None:
                raise Unavailable(UNVERIFIABLE, 503)
            return cached[1]
        try:
            # with an answer to fall back on, a page waits at most RECHECK_TIMEOUT for the new one
            # (the API server may hang before /readyz tells)
            wait = min(self.timeout, RECHECK_TIMEOUT) if cached is not None else None
            ok = self._review(identity, verb, resource, subresource, wait, namespace)
        except KubeError as exc:
            if cached is not None and not refused(exc):
                return cached[1]
            raise
        with self._lock:
            self._checks[key] = (now, ok)
            self._checks.move_to_end(key)
            while len(self._checks) > CHECKS_KEPT:
                self._checks.popitem(last=False)
        return ok

    def allowed(self, identity: Identity, verb: str, resource: str, subresource: str = "") -> bool:
        """Like ``check``, but False when unsure (for showing or hiding forms)."""
        try:
            return self.check(identity, verb, resource, subresource)
        except KubeError as exc:
            log.warning("access check for %s failed: %s [%s]", identity.label, exc.message, exc.detail)
            return False

    def can_edit(self, identity: Identity) -> bool:
        return self.allowed(identity, "patch", "nodes", "status")

    def close(self) -> None:
        with self._lock:
            for api in self._clients.values():
                api.close()
            self._clients.clear()
