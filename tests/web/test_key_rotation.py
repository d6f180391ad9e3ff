"""Rotating EXTRES_SECRET_KEY: a session and its CSRF token made with the old key keep working
while the old key is listed in EXTRES_PREVIOUS_SECRET_KEYS, and stop once it is not."""

from __future__ import annotations

from tests.helpers import browser

OLD, NEW = "o" * 64, "n" * 64


def test_a_session_signed_with_the_previous_key_survives_the_rotation(make_app, cluster):
    before = browser(make_app(auth_mode="token", secret_key=OLD))
    assert before.post("/login", data={"token": "a-token", "next": "/"}).status_code == 303
    nonce_csrf = before.csrf_for()  # the CSRF token a page of the old app carried (sets its nonce)
    cookie = before.get_cookie("__Host-extres_session", domain="localhost")
    assert cookie is not None

    def carried_over(app):
        web = browser(app)
        web.set_cookie("__Host-extres_session", cookie.value, domain="localhost")
        return web

    rotated = carried_over(make_app(auth_mode="token", secret_key=NEW, previous_secret_keys=(OLD,)))
    assert rotated.get("/").status_code == 200  # still signed in
    resp = rotated.post("/logout", data={"csrf_token": nonce_csrf}, csrf=False)
    assert resp.status_code == 303  # the old key's CSRF token is accepted too
    gone = carried_over(make_app(auth_mode="token", secret_key=NEW))
    assert gone.get("/").status_code == 302  # the old key removed: signed out
