"""The revocation list's text: entries past their end are dropped, the list is bounded, and a
hand-edited line that is not an entry is skipped."""

from __future__ import annotations

from app.kube import revocations
from app.kube.revocations import Revocations, digest, parse, prune, render


def test_ended_entries_are_dropped_and_the_rest_kept():
    entries = {digest("old"): 100, digest("live"): 300}
    assert parse(render(prune(entries, now=200))) == {digest("live"): 300}


def test_the_list_is_bounded_keeping_the_entries_that_end_last(monkeypatch):
    entries = {digest(str(i)): 1000 + i for i in range(50)}
    kept = prune(entries, now=0, keep=10)
    assert sorted(kept.values()) == list(range(1040, 1050))


def test_lines_that_are_not_entries_are_skipped():
    good = digest("x")
    text = f"{good} 5\nnot an entry\n{'z' * 32} 12a\n{'y' * 32} ٣\n"
    assert parse(text) == {good: 5}


def test_in_memory_list_revokes_until_the_session_would_have_ended(monkeypatch):
    r = Revocations(None, None)
    now = 1_000_000.0
    monkeypatch.setattr(revocations.time, "time", lambda: now)
    r.revoke("s1", until=now + 10)
    assert r.revoked("s1") and not r.revoked("s2")
    now += 20
    assert not r.revoked("s1")  # ended anyway: no longer kept
