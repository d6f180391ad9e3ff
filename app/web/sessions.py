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
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable, MutableMapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

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

    def sign_in(self, session: MutableMapping[str, Any], token: str) -> None:
        session.clear()
        now = int(time.time())
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

    def token(self, session: MutableMapping[str, Any]) -> str | None:
        """The session's token, or None (and the session cleared) when it expired or was tampered
        with. Marks the session as used now."""
        sealed = session.get("token")
        if not sealed:
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
