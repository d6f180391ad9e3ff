from app.domain.history import Change, parse_change


def test_event_messages_parse_back_into_changes():
    message = "system:serviceaccount:extres:extres: set example.com/dongle 4 -> 6"
    assert parse_change("t", "n1", message) == Change(
        "t", "n1", "system:serviceaccount:extres:extres", "set", "example.com/dongle", "4", "6"
    )
    assert parse_change("t", "n1", "alice: remove acme.io/fpga 2 -> absent").new == "absent"
    assert parse_change("t", "n1", "Node n1 status is now: NodeReady") is None
    assert parse_change("t", "n1", "") is None


def test_a_seal_holds_for_its_node_message_key_and_time_only():
    from app.domain.history import SEAL_SKEW, seal, sealed

    value = seal("key", "n1", "ann: set x/y 1 -> 2", 1_000_000)
    assert sealed(["key"], "n1", "ann: set x/y 1 -> 2", value, created=1_000_001)
    assert sealed(["new", "key"], "n1", "ann: set x/y 1 -> 2", value, created=1_000_001)  # a rotated key
    assert not sealed(["other"], "n1", "ann: set x/y 1 -> 2", value, created=1_000_001)
    assert not sealed(["key"], "n2", "ann: set x/y 1 -> 2", value, created=1_000_001)
    assert not sealed(["key"], "n1", "ann: set x/y 1 -> 99", value, created=1_000_001)
    assert not sealed(
        ["key"], "n1", "ann: set x/y 1 -> 2", value, created=1_000_000 + SEAL_SKEW + 1
    )  # replayed
    for junk in ("", "x.y", "٣.abc", "9" * 40 + ".abc"):
        assert not sealed(["key"], "n1", "m", junk, created=1_000_000)
