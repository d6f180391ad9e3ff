"""The strip's first screen (app/domain/strip.py): what asks for attention comes first."""

from __future__ import annotations

from app.domain.strip import Entry, shown_first


def test_the_strip_asks_for_attention_in_order_never_by_name_alone():
    entries = [
        Entry("a.io/qubit", 0, 0, 0, 0, 0, 0),  # nothing advertises, holds or waits for it
        Entry("b.io/dongle", 4, 2, 2, 0, 0, 0),
        Entry("c.io/waited", 4, 4, 1, 1, 0, 0),
        Entry("nvidia.com/gpu", 8, 11, 2, 2, 3, 1, unavailable=4, nodes_unavailable=1),
        Entry("d.io/busy", 8, 8, 1, 5, 0, 0),
    ]
    shown, more = shown_first(entries, (), 3)
    assert [e.resource for e in shown] == ["nvidia.com/gpu", "d.io/busy", "c.io/waited"]
    assert [e.resource for e in more] == ["b.io/dongle", "a.io/qubit"]
    shown, _ = shown_first(entries, ("a.io/qubit",), 1)  # the reader's choice first
    assert [e.resource for e in shown] == ["a.io/qubit"]


def test_whole_gpus_keep_a_place_on_the_first_screen_whatever_else_asks_for_attention():
    """What a GPU job can get now is an admin's first question: shares unhealthy and other
    over-commitments rank first, yet whole GPUs take the last place the reader did not choose."""
    entries = [
        Entry("nvidia.com/gpu.shared", 8, 8, 2, 1, 0, 0, unavailable=4, nodes_unavailable=1),
        Entry("wgh/extended-cpu", 8, 12, 2, 1, 4, 1),
        Entry("example.com/dongle", 4, 4, 1, 3, 0, 0),
        Entry("nvidia.com/gpu", 8, 8, 2, 2, 0, 0),
        Entry("a.io/qubit", 0, 0, 0, 0, 0, 0),
    ]
    shown, more = shown_first(entries, (), 3)
    assert [e.resource for e in shown] == ["nvidia.com/gpu.shared", "wgh/extended-cpu", "nvidia.com/gpu"]
    assert [e.resource for e in more] == ["example.com/dongle", "a.io/qubit"]  # still in attention's order
    chosen, _ = shown_first(entries, ("a.io/qubit", "example.com/dongle"), 2)  # the reader's choices stand
    assert [e.resource for e in chosen] == ["a.io/qubit", "example.com/dongle"]


def test_each_kind_of_whole_gpus_keeps_a_place():
    entries = [
        Entry("nvidia.com/gpu.shared", 4, 0, 1, 0, 0, 0, unavailable=4, nodes_unavailable=1),
        Entry("example.com/dongle", 6, 5, 2, 1, 0, 0),
        Entry("example.com/gpu", 8, 4, 2, 1, 0, 0),  # DRA's
        Entry("nvidia.com/gpu", 8, 2, 2, 0, 0, 0),  # a device plugin's
    ]
    shown, more = shown_first(entries, (), 3)
    assert [e.resource for e in shown] == ["nvidia.com/gpu.shared", "example.com/gpu", "nvidia.com/gpu"]
    assert [e.resource for e in more] == ["example.com/dongle"]
