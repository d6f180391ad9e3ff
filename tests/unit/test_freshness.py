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
