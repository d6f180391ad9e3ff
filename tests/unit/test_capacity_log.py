"""The capacity history's records: what moved, who owns it, one key per change, sealed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.domain.capacity_log import Managed, Record, decode, encode, merged, merged_day, moved, owner

D = "example.com/dongle"


def test_only_extended_amounts_that_moved_are_records():
    before = {"capacity": {D: 2, "acme.io/fpga": 1}, "allocatable": {D: 2}}
    after = {"capacity": {D: 3}, "allocatable": {D: 2, "nvidia.com/gpu": 8}}
    assert moved(before, after) == [
        ("capacity", "acme.io/fpga", 1, None),
        ("capacity", D, 2, 3),
        ("allocatable", "nvidia.com/gpu", None, 8),
    ]
    assert moved(before, before) == []


def test_the_newest_manager_owning_the_field_made_the_change():
    entries = [
        Managed("kubelet", "2026-12-01T10:00:00Z", {"capacity": frozenset({"nvidia.com/gpu"})}),
        Managed("kubectl-patch", "2026-12-02T10:00:00Z", {"capacity": frozenset({D})}),
        Managed("extres", "2026-12-01T09:00:00Z", {"capacity": frozenset({D})}),
    ]
    assert owner(entries, "capacity", D) == ("kubectl-patch", "2026-12-02T10:00:00Z")
    # removed: nobody owns it now; the newest entry touching the field removed it
    assert owner(entries, "capacity", "acme.io/fpga") == ("kubectl-patch", "2026-12-02T10:00:00Z")
    assert owner(entries, "allocatable", D) == ("", "")


def test_one_change_has_one_key_and_sightings_merge_keeping_the_user():
    seen = Record("2026-12-04T01:00:03Z", "n1", "capacity", D, 2, 3, "extres", "", "42")
    written = replace(seen, when="2026-12-04T01:00:02Z", user="ann")
    assert seen.key == written.key != replace(seen, version="43").key
    both = merged(seen, written)
    assert (both.user, both.when) == ("ann", "2026-12-04T01:00:02Z")
    kept, refused = merged_day({}, [seen, written, replace(seen, resource="acme.io/fpga")], ("k",))
    assert len(kept) == 2 and decode(kept[seen.key], ("k",)).user == "ann" and refused == []


def record(i: int) -> Record:
    return Record(f"2026-12-04T00:00:{i:02d}Z", "n1", "capacity", D, i, i + 1, "", "", str(i))


def test_a_full_day_refuses_new_records_and_keeps_every_one_it_holds():
    held, refused = merged_day({}, [record(i) for i in range(3)], ("k",), limit=3)
    after, refused = merged_day(held, [record(3), record(4), replace(record(0), user="ann")], ("k",), limit=3)
    assert [r.version for r in refused] == ["3", "4"]  # refused before the write, to be counted
    assert set(after) == set(held)  # nothing already there given up for them
    assert decode(after[record(0).key], ("k",)).user == "ann"  # a sighting of a held change merges


def test_entries_that_do_not_verify_are_kept_untouched():
    """Sealed with a key this process no longer has (or written by someone else): left as they
    are, never deleted by the next write."""
    foreign = {record(0).key: encode(record(0), "old key"), "junk": "not json"}
    after, refused = merged_day(foreign, [record(1), record(0)], ("new key",))
    assert after[record(0).key] == foreign[record(0).key] and after["junk"] == "not json"
    assert decode(after[record(1).key], ("new key",)) == record(1)
    assert [r.version for r in refused] == ["0"]  # its key is taken by an entry left untouched


def test_only_records_sealed_with_a_known_key_are_read():
    r = Record("2026-12-04T01:00:03Z", "n1", "capacity", D, None, 3, "kubectl-patch", "", "42")
    assert decode(encode(r, "k2"), ("k1", "k2")) == r  # sealed with the previous key: still read
    forged = encode(r, "k1").replace('"after":3', '"after":300')
    assert decode(forged, ("k1",)) is None
    assert decode(encode(r, "other"), ("k1",)) is None
    assert decode("not json", ("k1",)) is None and decode("x" * 1000, ("k1",)) is None
    assert decode('{"seal": "x", "when": 1}', ("k1",)) is None
    sealed = json.loads(encode(r, "k1"))
    for seal in ("é", "١٢", "²", "\ud800"):  # any Unicode for a seal: refused, never an error
        assert decode(json.dumps({**sealed, "seal": seal}), ("k1",)) is None


def test_a_members_records_name_their_cluster_and_the_own_clusters_read_as_they_always_did():
    """A member's record (kept in the dashboard's own store) is sealed with its cluster and keyed
    apart from the same change on the own cluster; the own cluster's encode exactly as before
    members existed (no cluster field), so records already stored still verify."""
    own = Record("2026-12-04T01:00:03Z", "n1", "capacity", D, 8, 7, "kubelet", "", "42")
    written_before_members = (  # as the store held it before (the seal made by that version)
        '{"after":7,"before":8,"field":"capacity","manager":"kubelet","node":"n1","resource":'
        '"example.com/dongle","seal":"25548614b6a96dc9ddcede81ab3ead7a","user":"","version":"42",'
        '"when":"2026-12-04T01:00:03Z"}'
    )
    assert encode(own, "k1") == written_before_members and decode(written_before_members, ("k1",)) == own
    member = replace(own, cluster="b")
    assert member.key != own.key and decode(encode(member, "k1"), ("k1",)) == member
    moved_here = encode(member, "k1").replace('"cluster":"b",', "")  # claimed for the own cluster
    assert decode(moved_here, ("k1",)) is None
    assert decode(encode(member, "k1").replace('"cluster":"b"', '"cluster":"c"'), ("k1",)) is None


def test_managed_fields_name_who_owns_which_extended_amounts():
    import json

    from app.kube.wire.managed_fields import managed

    node = {
        "metadata": {
            "managedFields": [
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "subresource": "status",
                    "time": "2026-12-04T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:status": {
                            "f:capacity": {"f:cpu": {}, "f:nvidia.com/gpu": {}},
                            "f:allocatable": {"f:nvidia.com/gpu": {}},
                            "f:conditions": {},
                        }
                    },
                },
                {"manager": "kubectl-label", "time": "2026-12-04T00:01:00Z", "fieldsV1": {"f:metadata": {}}},
                {"manager": "odd", "fieldsV1": {"f:status": "not a map"}},
            ]
        }
    }
    [kubelet] = managed(json.dumps(node).encode())
    assert kubelet.manager == "kubelet"
    assert kubelet.owns == {"capacity": {"nvidia.com/gpu"}, "allocatable": {"nvidia.com/gpu"}}
    assert managed(b"not json") == [] and managed(b"{}") == []


def test_records_waiting_to_be_written_are_bounded_and_the_rest_counted(monkeypatch):
    from app.kube.api import capacity_log
    from app.kube.api.capacity_log import CapacityLog

    monkeypatch.setattr(capacity_log, "QUEUE", 3)
    log = CapacityLog(None, None, ("k",))  # no store: nothing is written, the queue only fills
    for i in range(5):
        log._put(Record("2026-12-04T00:00:00Z", "n1", "capacity", D, i, i + 1, "", "", str(i)))
    assert (len(log._queue), log.dropped) == (3, 2)


def test_any_32_consecutive_days_have_stores_of_their_own():
    from datetime import date, timedelta

    from app.domain.capacity_log import SLOTS, slot

    start = date(2027, 1, 20)  # across February, where day-of-month names would collide
    days = [(start + timedelta(days=i)).isoformat() for i in range(SLOTS)]
    assert sorted(slot(d) for d in days) == list(range(SLOTS))
    assert slot((start + timedelta(days=SLOTS)).isoformat()) == slot(days[0])


def test_a_store_holding_an_older_day_starts_again_and_its_own_day_keeps_everything():
    from app.domain.capacity_log import DAY_KEY, merged_store

    keys = ("k",)
    first = Record("2026-11-03T10:00:00Z", "n", "capacity", "example.com/dongle", 1, 2, "extres", "", "5")
    held, _ = merged_store({}, "2026-11-03", [first], keys)
    assert held[DAY_KEY] == "2026-11-03" and len(held) == 2
    held["foreign"] = "not sealed here"
    same, _ = merged_store(held, "2026-11-03", [], keys)
    assert same == held  # the same day: every entry stays, the foreign one too
    later = Record("2026-12-05T10:00:00Z", "n", "capacity", "example.com/dongle", 2, 3, "extres", "", "9")
    reused, _ = merged_store(held, "2026-12-05", [later], keys)
    assert reused[DAY_KEY] == "2026-12-05" and set(reused) == {DAY_KEY, later.key}
    # a record 32 days older than the day a store holds never empties it: it is refused
    kept, refused = merged_store(reused, "2026-11-03", [first], keys)
    assert kept == reused and refused == [first]


def test_a_change_is_dated_as_its_writer_claims_only_near_when_it_was_seen():
    """managedFields' time is anyone's to write: a date far off (which would file the record
    under another day's store) gives way to when the change was seen."""
    from app.domain.capacity_log import when

    seen = "2026-12-05T10:00:00Z"
    assert when("2026-12-05T09:59:58Z", seen) == "2026-12-05T09:59:58Z"
    assert when("2001-01-01T00:00:00Z", seen) == seen
    assert when("2026-12-05T11:00:00Z", seen) == seen
    assert when("", seen) == seen and when("not a time", seen) == seen


def test_a_record_with_the_longest_names_the_api_allows_is_kept_and_read_back():
    """Records over 400 characters used to be left out when read: they vanished."""
    node = "n" * 253
    resource = "a" * 253 + "/" + "b" * 63
    r = Record("2026-12-05T10:00:00Z", node, "capacity", resource, 1, 2, "m" * 128, "ü" * 256, "123")
    text = encode(r, "k")
    assert len(text) > 2000 and decode(text, ("k",)) == r


def test_a_day_refuses_new_records_past_its_size_before_the_write():
    from app.domain.capacity_log import DAY_BYTES

    big = [
        Record(
            "2026-12-05T10:00:00Z",
            f"{i:04d}" + "n" * 249,
            "capacity",
            "a" * 253 + "/x",
            1,
            2,
            "m",
            "u" * 256,
            "1",
        )
        for i in range(1000)
    ]
    out, refused = merged_day({}, big, ("k",))
    assert sum(len(k) + len(v) for k, v in out.items()) <= DAY_BYTES
    assert refused and len(out) + len(refused) == 1000  # each one kept or counted, none lost


@pytest.mark.parametrize(("status", "kept"), [(400, 0), (413, 0), (422, 0), (503, 1), (409, 1)])
def test_a_write_refused_for_what_it_is_is_counted_not_retried_forever(monkeypatch, status, kept):
    """A batch the API server refuses for what it is (400, 413, 422) would be refused again: its
    records are counted as not recorded and the problem shown; one refused for now (503, or a
    409 the merge's own retries did not get past) waits again. The error is the API server's
    answer as the client raises it, translated as every caller's is."""
    from kubernetes import client

    from app.kube.api.capacity_log import CapacityLog
    from app.kube.api.errors import translate

    log = CapacityLog(client.ApiClient(client.Configuration()), "ns/h", ("k",))

    class Refusing:
        def merge(self, change, what):
            raise translate(client.ApiException(status=status, reason="refused"))

    monkeypatch.setattr(log, "_doc", lambda day: Refusing())
    monkeypatch.setattr(log, "start", lambda: None)
    log._put(Record("2026-12-04T00:00:00Z", "n1", "capacity", D, 1, 2, "", "", "1"))
    log.flush()
    assert (len(log._queue), log.dropped) == (kept, 1 - kept)
    said = translate(client.ApiException(status=status)).message
    assert log.problem == (said if kept else f"1 changes not recorded: {said}")


def test_a_change_made_here_is_read_back_before_it_is_written(monkeypatch):
    """The history page right after a change shows it: records still waiting to be written (or
    being written) are read with the stored ones, each change once (the README demo's history
    step opened the page within the second before the write)."""
    from kubernetes import client

    from app.kube.api.capacity_log import CapacityLog

    log = CapacityLog(client.ApiClient(client.Configuration()), "ns/h", ("k",))
    stored = Record("2026-01-01T00:00:00Z", "n4", "capacity", D, 2, None, "extres", "ann", "7")
    monkeypatch.setattr(log._reads, "get", lambda: (([stored], 0), False))
    monkeypatch.setattr(log, "start", lambda: None)
    log.own("n2", D, 2, 3, "bob", "9")  # made here a moment ago, not yet written
    log._put(Record("2026-12-05T10:00:05Z", "n2", "capacity", D, 2, 3, "kubectl", "", "9"))  # its sighting
    shown = log.read().records
    assert [(r.node, r.after, r.user) for r in shown] == [("n2", 3, "bob"), ("n4", None, "ann")]


def test_two_changes_of_a_node_in_one_second_come_newest_first_by_resource_version():
    from app.domain.capacity_log import newest_first

    cap = Record("2026-12-05T10:00:00Z", "n", "capacity", D, None, 2, "kubectl", "", "98")
    alloc = Record("2026-12-05T10:00:00Z", "n", "allocatable", D, None, 2, "kubelet", "", "102")
    assert newest_first([cap, alloc]) == [alloc, cap]


def test_a_removal_is_dated_when_seen_unless_the_entry_still_touching_the_field_wrote_just_then():
    """The remover's managedFields entry goes with its last field: the newest entry still
    touching status.capacity (the kubelet's heartbeat of minutes before) is not its remover."""
    from app.domain.capacity_log import attributed

    seen = "2026-12-05T10:00:00Z"
    kubelet = Managed("kubelet", "2026-12-05T09:56:00Z", {"capacity": frozenset({"cpu"})})
    assert attributed([kubelet], "capacity", D, seen) == ("", seen)  # not 09:56, not the kubelet
    remover = Managed("kubectl-patch", "2026-12-05T09:59:59Z", {"capacity": frozenset({"cpu"})})
    assert attributed([kubelet, remover], "capacity", D, seen) == ("kubectl-patch", "2026-12-05T09:59:59Z")
    setter = Managed("extres", "2026-12-05T09:59:58Z", {"capacity": frozenset({D})})  # a set: as before
    assert attributed([kubelet, setter], "capacity", D, seen) == ("extres", "2026-12-05T09:59:58Z")
