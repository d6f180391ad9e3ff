"""Token sign-in: a token too long for a cookie is refused with a way out; attempts per client
address are throttled (each costs the API server a TokenReview)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from app.web.auth import MAX_TOKEN
from app.web.services import SIGN_INS
from app.web.throttle import Throttle
from tests.conftest import browser


def error(resp) -> str:
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser").get_text(" ", strip=True)


def test_a_token_too_long_for_a_cookie_is_refused_naming_the_proxy(make_app, cluster):
    web = browser(make_app(auth_mode="token"))
    resp = web.post("/login", data={"token": "x" * (MAX_TOKEN + 1), "next": "/"})
    assert resp.status_code == 401 and "too long for a browser" in error(resp)
    assert cluster.access.asked == []  # nothing asked of the API server
    ok = web.post("/login", data={"token": "x" * MAX_TOKEN, "next": "/"})
    assert ok.status_code == 303  # the stub accepts any token: the longest allowed signs in
    assert len(ok.headers["Set-Cookie"]) < 4000  # and its cookie is one a browser keeps


def test_sign_in_attempts_are_throttled_per_client_address(make_app):
    web = browser(make_app(auth_mode="token"))
    codes = [web.post("/login", data={"token": "t", "next": "/"}).status_code for _ in range(SIGN_INS + 2)]
    assert codes[:SIGN_INS] == [303] * SIGN_INS and codes[SIGN_INS:] == [429, 429]
    other = web.post("/login", data={"token": "t", "next": "/"}, environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert other.status_code == 303  # another address is not held back


def test_the_throttle_forgets_the_least_recent_addresses_past_its_bound():
    throttle = Throttle(limit=1, keys=3)
    assert all(throttle.allow(a) for a in "abcd")  # d pushes a out
    assert throttle.allow("a") and not throttle.allow("d")
