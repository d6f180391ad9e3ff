"""The signed-in user's token in the session cookie, encrypted, and the session's lifetime.

Flask's session cookie is signed, not encrypted: anyone who sees it could read
what it holds. The bearer token is therefore kept encrypted with Fernet
(AES-128-CBC with HMAC-SHA256, from ``cryptography``) under a key derived from
``EXTRES_SECRET_KEY`` by HKDF for this one purpose, so the signing key and the
encryption key differ. ``cryptography`` is loaded at the first session that holds a token (~8 MiB
of a process that only ever serves trusted identity headers or the service account never pays).
A session ends after ``EXTRES_SESSION_IDLE_MINUTES``
without a request, or ``EXTRES_SESSION_MAX_HOURS`` after sign-in, whichever
comes first, or when it signs out: each session has a random id, and signing
out adds it to the revocation list every replica checks
(``app.kube.api.revocations``), so a copy of the cookie made before stops working.

Each cluster has a session of its own (``ClusterSessions``): a member's pages (``/c/<name>/``)
keep theirs in a cookie whose Path is that prefix, so the browser sends it there alone and a
member's token never travels with another cluster's requests. A session names the cluster it
was signed in to, inside the signed cookie: one copied under another cluster's path opens
nothing (its token is never sent to a cluster that did not issue it).
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable, MutableMapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from flask import Flask, request
from flask.sessions import SecureCookieSessionInterface

if TYPE_CHECKING:
    from cryptography.fernet import Fernet, MultiFernet

PURPOSE = b"extres session token v1"


def fernet(secret_key: str) -> Fernet:
    from cryptography.fernet import Fernet
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE).derive(secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(key))


class TokenSession:
    def __init__(
        self,
        secret_key: str,
        idle_seconds: float,
        max_seconds: float,
        previous: Sequence[str] = (),
        revoked: Callable[[str], bool] = lambda session_id: False,
    ) -> None:
        self._keys = [secret_key, *previous]
        self.idle = idle_seconds
        self.max = max_seconds
        self.revoked = revoked  # may raise KubeError when it cannot be known

    @cached_property
    def _fernet(self) -> MultiFernet:
        """Seals with the key; opens with it or any previous one (key rotation)."""
        from cryptography.fernet import MultiFernet

        return MultiFernet([fernet(key) for key in self._keys])

    def sign_in(self, session: MutableMapping[str, Any], token: str, cluster: str | None = None) -> None:
        """``cluster``: the member cluster that accepted ``token`` (None: the local one)."""
        session.clear()
        now = int(time.time())
        session["cluster"] = cluster or ""
        session["token"] = self._fernet.encrypt(token.encode()).decode()
        session["sid"] = secrets.token_urlsafe(18)
        session["since"] = now
        session["seen"] = now

    def sign_out(self, session: MutableMapping[str, Any]) -> tuple[str, float] | None:
        """Clears the session; returns its id and when it would have ended, to be revoked."""
        sid, since = session.get("sid"), session.get("since", 0)
        session.clear()
        if not sid or not isinstance(since, int):
            return None
        return str(sid), since + self.max

    def token(self, session: MutableMapping[str, Any], cluster: str | None = None) -> str | None:
        """The session's token for ``cluster`` (None: the local one), or None (and the session
        cleared) when it expired, was tampered with or was signed in to another cluster. Marks the
        session as used now."""
        sealed = session.get("token")
        if not sealed:
            return None
        if session.get("cluster", "") != (cluster or ""):
            session.clear()
            return None
        now = time.time()
        since, seen, sid = session.get("since", 0), session.get("seen", 0), session.get("sid")
        if now - seen > self.idle or now - since > self.max or not sid or self.revoked(str(sid)):
            session.clear()  # a session from before session ids cannot be revoked: it ends too
            return None
        from cryptography.fernet import InvalidToken

        try:
            token = self._fernet.decrypt(str(sealed).encode(), ttl=int(self.max) + 60).decode()
        except InvalidToken:
            session.clear()
            return None
        if now - seen > 60:  # refresh the idle clock at most once a minute (the cookie is rewritten)
            session["seen"] = int(now)
        return token


class ClusterSessions(SecureCookieSessionInterface):
    """The local cluster's session in the site-wide cookie; a member's in a cookie of its own,
    its Path the member's prefix (app.web.clusters), so it is sent with that member's requests
    alone."""

    def __init__(self, member_cookie: str) -> None:
        self.member_cookie = member_cookie

    def get_cookie_name(self, app: Flask) -> str:
        return self.member_cookie if request.environ.get("extres.cluster") else super().get_cookie_name(app)

    def get_cookie_path(self, app: Flask) -> str:
        name = request.environ.get("extres.cluster")
        return f"{request.environ.get('SCRIPT_NAME', '')}/" if name else super().get_cookie_path(app)
