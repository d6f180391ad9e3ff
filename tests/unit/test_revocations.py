"""The revocation list: entries past their end are dropped, none before it; past the cap new
sign-ins wait; a hand-edited line that is not an entry is skipped and counted; the refresher
survives any failure."""

from __future__ import annotations

import threading

from app.kube.api import revocations
from app.kube.api.revocations import MAX_ENTRIES, Revocations, digest, live, parse, render


def test_ended_entries_are_dropped_and_the_rest_kept():
    entries = {digest("old"): 100, digest("live"): 300}
    assert parse(render(live(entries, now=200))) == ({digest("live"): 300}, 0)


def test_lines_that_are_not_entries_are_skipped_and_counted():
    good = digest("x")
    text = f"{good} 5\nnot an entry\n{'z' * 32} 12a\n{'y' * 32} ٣\n\n"
    assert parse(text) == ({good: 5}, 3)


def test_in_memory_list_revokes_until_the_session_would_have_ended(monkeypatch):
    r = Revocations(None, None)
    now = 1_000_000.0
    monkeypatch.setattr(revocations.time, "time", lambda: now)
    r.revoke("s1", until=now + 10)
    assert r.revoked("s1") and not r.revoked("s2")
    now += 20
    assert not r.revoked("s1")  # ended anyway: no longer kept


def test_no_live_sign_out_is_evicted_new_sign_ins_wait_instead(monkeypatch):
    """10,000 sign-outs used to push the oldest live ones out, reviving those cookies. Now every
    one stays until its session would have ended, and sign-in pauses while the list is full."""
    r = Revocations(None, None)
    now = 1_000_000.0
    monkeypatch.setattr(revocations.time, "time", lambda: now)
    r.revoke("s0", until=now + 3600)
    r._local.update({digest(f"s{i}"): int(now) + 3600 for i in range(1, MAX_ENTRIES - 1)})  # signed out
    assert r.full() is None
    r.revoke("last", until=now + 60)
    assert r.revoked("s0") and r.revoked("last")  # the first one is still revoked
    assert r.full() is not None and "10,000" in str(r.full())
    now += 120  # "last" ended: room again
    assert r.full() is None and r.revoked("s0")


def test_the_refresher_survives_any_exception(monkeypatch):
    r = Revocations(None, None)
    r._doc = object()  # type: ignore[assignment]  # a shared list, as if configured
    r.refresh = 0.01
    calls: list[int] = []
    second = threading.Event()

    def reload() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("an entry no parser expected")
        second.set()

    monkeypatch.setattr(r, "_reload", reload)
    r.start()
    try:
        assert second.wait(5), "the refresh thread died with the first failure"
    finally:
        r.stop()


def test_a_good_read_is_timed_and_a_failed_one_is_not(monkeypatch):
    from app.kube.api.errors import Unavailable

    r = Revocations(None, None)
    r._doc = doc = type("Doc", (), {})()  # type: ignore[assignment]
    r.read_at = None
    doc.read = lambda: ({"revoked": f"{digest('a')} 99\nnot an entry\n"}, "1")
    monkeypatch.setattr(revocations.time, "time", lambda: 50.0)
    r._reload()
    assert r.read_at == 50.0 and r.skipped == 1

    def down():
        raise Unavailable("no answer")

    doc.read = down
    monkeypatch.setattr(revocations.time, "time", lambda: 80.0)
    r._reload()
    assert r.read_at == 50.0  # its age (now - read_at) grows while reads fail
