"""Token sign-in: a token too long for a cookie is refused with a way out; failed sign-ins are
limited per client address and per token (each costs the API server a TokenReview)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from app.web.auth import MAX_TOKEN
from app.web.sign_in_limits import PER_CLIENT, PER_TOKEN
from tests.helpers import browser


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


def test_failed_sign_ins_are_limited_per_client_address_and_accepted_tokens_pass(make_app, cluster):
    """Only failures count; past PER_CLIENT of them an address waits without a TokenReview, yet a
    token the API server accepted lately still signs in (an address everyone behind an ingress
    shares never locks known users out), and another address is not held back."""
    cluster.access.refused_tokens = {f"bad-{i}" for i in range(PER_CLIENT + 2)}
    web = browser(make_app(auth_mode="token"))
    assert web.post("/login", data={"token": "good", "next": "/"}).status_code == 303  # now known
    assert web.post("/login", data={"token": "good", "next": "/"}).status_code == 303  # not counted
    codes = [
        web.post("/login", data={"token": f"bad-{i}", "next": "/"}).status_code for i in range(PER_CLIENT + 2)
    ]
    assert codes == [401] * PER_CLIENT + [429, 429]
    assert "Too many failed sign-ins from this address" in error(
        web.post("/login", data={"token": "new", "next": "/"})
    )
    assert web.post("/login", data={"token": "good", "next": "/"}).status_code == 303
    other = web.post("/login", data={"token": "new", "next": "/"}, environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert other.status_code == 303


def test_one_token_refused_again_and_again_waits_whatever_the_address(make_app, cluster):
    cluster.access.refused_tokens = {"stolen"}
    web = browser(make_app(auth_mode="token"))
    codes = [
        web.post("/login", data={"token": "stolen", "next": "/"}, environ_base={"REMOTE_ADDR": f"10.0.0.{i}"})
        for i in range(PER_TOKEN + 1)
    ]
    assert [r.status_code for r in codes] == [401] * PER_TOKEN + [429]
    assert "refused several times" in error(codes[-1])


def test_behind_a_proxy_not_named_as_trusted_a_stranger_cannot_lock_the_others_out(make_app, cluster):
    """The ingress forwards for everyone (X-Forwarded-For) but is not a trusted proxy: its
    address is not any one client's, so failures there count against each token only."""
    cluster.access.refused_tokens = {f"bad-{i}" for i in range(PER_CLIENT * 3)}
    web = browser(make_app(auth_mode="token"))
    via = {"X-Forwarded-For": "198.51.100.7"}
    codes = [
        web.post("/login", data={"token": f"bad-{i}", "next": "/"}, headers=via).status_code
        for i in range(PER_CLIENT * 3)
    ]
    assert codes == [401] * (PER_CLIENT * 3)  # a new token each time: the per-token limit only
    assert web.post("/login", data={"token": "new-user", "next": "/"}, headers=via).status_code == 303


def test_behind_a_forwarding_ingress_each_user_is_the_address_it_adds_and_strangers_lock_out_only_themselves(
    make_app, cluster
):
    """EXTRES_FORWARDERS (the chart's, when its NetworkPolicy admits only the ingress
    controller): the controller is believed for the entry it adds, the rightmost, never for what
    the client sent before it; 60 random bearers from one user then spend that user's limits,
    and a new user behind the same controller signs in."""
    cluster.access.refused_tokens = {f"bad-{i}" for i in range(60)}
    web = browser(make_app(auth_mode="token", forwarders=("10.0.0.0/8",)))
    ingress = {"REMOTE_ADDR": "10.1.2.3"}
    stranger = {"X-Forwarded-For": "192.0.2.1, 203.0.113.66"}  # the first entry is the stranger's own
    codes = [
        web.post("/login", data={"token": f"bad-{i}", "next": "/"}, headers=stranger, environ_base=ingress)
        for i in range(60)
    ]
    assert [c.status_code for c in codes] == [401] * PER_CLIENT + [429] * (60 - PER_CLIENT)
    assert set(cluster.access.clients) == {"203.0.113.66"}
    new = web.post(
        "/login", data={"token": "new-user", "next": "/"}, headers={"X-Forwarded-For": "198.51.100.9"},
        environ_base=ingress,
    )  # fmt: skip
    assert new.status_code == 303 and cluster.access.clients[-1] == "198.51.100.9"
    # a peer that is not a forwarder is believed for nothing it sends
    web.post("/login", data={"token": "x", "next": "/"}, headers={"X-Forwarded-For": "198.51.100.9"})
    assert cluster.access.clients[-1] is None


def test_an_ipv6_client_is_one_client_across_its_64(make_app, cluster):
    cluster.access.refused_tokens = {f"bad-{i}" for i in range(PER_CLIENT + 1)}
    web = browser(make_app(auth_mode="token"))
    for i in range(PER_CLIENT):
        answer = web.post(
            "/login",
            data={"token": f"bad-{i}", "next": "/"},
            environ_base={"REMOTE_ADDR": f"2001:db8:0:7::{i + 1:x}"},
        )
        assert answer.status_code == 401
    rotated = {"REMOTE_ADDR": "2001:db8:0:7:ffff::1"}  # the same /64: the same client
    assert web.post("/login", data={"token": "new", "next": "/"}, environ_base=rotated).status_code == 429
    other = {"REMOTE_ADDR": "2001:db8:0:8::1"}  # another /64
    assert web.post("/login", data={"token": "new", "next": "/"}, environ_base=other).status_code == 303


def test_a_boosted_sign_in_whose_next_is_not_ascii_signs_in_and_goes_somewhere_local(make_app, cluster):
    cluster.node("n1", {"example.com/dongle": "2"})
    web = browser(make_app(auth_mode="token"))
    boosted = {"HX-Request": "true", "HX-Boosted": "true"}
    for asked, lands in (("/nodes/ñ-1?x=é", "/nodes/%C3%B1-1?x=%C3%A9"), ("//evil.example/ñ", "/")):
        resp = web.post("/login", data={"token": "good", "next": asked}, headers=boosted)
        assert resp.status_code == 204 and resp.headers["HX-Redirect"] == lands  # 500 before
        resp = web.post("/login", data={"token": "good", "next": asked})  # the plain form
        assert resp.status_code == 303 and resp.location == lands
