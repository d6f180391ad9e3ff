"""What decides whether the cache is synced and fresh (app/kube/api/freshness.py): an add-on's
kinds (Kueue's) are counted but never hold the dashboard back, the core and DRA kinds do."""

from __future__ import annotations

from app.kube.api.freshness import Statuses


def fresh(statuses: Statuses):
    return statuses.freshness(None, None, (), lambda: None)


def test_an_add_ons_kind_that_cannot_be_listed_holds_no_page_back():
    statuses = Statuses(("nodes", "pods"))
    for kind in ("nodes", "pods"):
        statuses.listed(kind)
    statuses.add("workloads", optional=True)
    statuses.restarted("workloads", "Internal error: conversion webhook for kueue.x-k8s.io failed", False)
    assert statuses.synced() and not fresh(statuses).stale
    assert not statuses.synced("workloads")  # still known to be unlisted, when asked by name
    assert "workloads" in statuses.counters({})  # and counted
    statuses.add("resourceslices")  # a DRA kind is not optional: it holds until listed
    assert not statuses.synced() and fresh(statuses).stale


def test_stale_since_is_when_contact_was_first_lost_not_a_quiet_watchs_last_event(monkeypatch):
    from app.kube.api import freshness

    now = [1000.0]
    monkeypatch.setattr(freshness.time, "monotonic", lambda: now[0])
    statuses = Statuses(("nodes", "pods"))
    for kind in ("nodes", "pods"):
        statuses.listed(kind)  # at 1000; nodes stay quiet from here on
    now[0] = 1040.0
    statuses.mark("pods", connected=True)  # an event at 1040
    now[0] = 1044.0
    statuses.restarted("pods", "connection refused", False)  # lost at 1044
    now[0] = 1050.0
    statuses.restarted("pods", "connection refused", False)  # still lost: since 1044, not 1050
    found = fresh(statuses)
    assert found.stale and found.age_seconds == 6.0  # not 50: the quiet nodes watch's last event
    now[0] = 1060.0
    statuses.mark("pods", connected=True)
    assert not fresh(statuses).stale
    # the API server not ready while every watch is open: since its last ready answer
    found = statuses.freshness("not ready: etcd", 1055.0, (), lambda: None)
    assert found.stale and found.age_seconds == 5.0


def test_an_answer_refused_for_its_size_is_said_until_contact_whatever_failed_since():
    statuses = Statuses(("nodes", "pods"))
    statuses.listed("nodes")
    statuses.restarted("pods", "Refused: answer too large (an answer over 64 MiB).", False, too_large=True)
    assert fresh(statuses).too_large and "too large" in (fresh(statuses).error or "")
    statuses.restarted("pods", "Busy: answers being read at once reached 128 MiB.", False)  # crowded out
    assert fresh(statuses).too_large and "too large" in (fresh(statuses).error or "")
    statuses.listed("pods")
    assert not fresh(statuses).too_large and not fresh(statuses).stale
