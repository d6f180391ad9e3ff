"""How many failed sign-ins a client, and a token, may have: past either, sign-in waits a minute.

Counted in a moving window (app/base/rate_window.py: the `limits` library, the one Flask-Limiter is
built on). Used directly rather than through Flask-Limiter's decorators: what is counted is a
*failed* sign-in, known only once the API server has answered, and a token the API server
accepted lately passes whatever the count, so a flood of bad tokens from an address everyone
shares (an ingress not named in trusted_proxies) never locks out users already known."""

from __future__ import annotations

from app.base.rate_window import MovingWindow

PER_CLIENT = 10  # failed sign-ins per client address or IPv6 /64 (through the trusted proxies) per minute
PER_TOKEN = 3  # failed sign-ins with one token per minute, from any address


class SignInLimits:
    def __init__(self, per_client: int = PER_CLIENT, per_token: int = PER_TOKEN) -> None:
        self._window = MovingWindow()
        self._client, self._token = per_client, per_token

    def spent(self, client: str | None, token_digest: str) -> str | None:
        """Why this sign-in waits (too many failures from ``client`` or with the token), or None.
        A client whose address is not known (None) is limited by its token only: counting it
        against the address it shares with others would let it lock them out."""
        if client is not None and not self._window.test(self._client, "client", client):
            return "Too many failed sign-ins from this address; wait a minute and try again."
        if token_digest and not self._window.test(self._token, "token", token_digest):
            return "Token: refused several times in the last minute; wait a minute before trying it again."
        return None

    def failed(self, client: str | None, token_digest: str) -> None:
        """Count a failed sign-in against the client (when its address is known) and the token."""
        if client is not None:
            self._window.hit(self._client, "client", client)
        if token_digest:
            self._window.hit(self._token, "token", token_digest)
