from app.domain.history import Change, parse_change


def test_event_messages_parse_back_into_changes():
    message = "system:serviceaccount:extres:extres: set example.com/dongle 4 -> 6"
    assert parse_change("t", "n1", message) == Change(
        "t", "n1", "system:serviceaccount:extres:extres", "set", "example.com/dongle", "4", "6"
    )
    assert parse_change("t", "n1", "alice: remove acme.io/fpga 2 -> absent").new == "absent"
    assert parse_change("t", "n1", "Node n1 status is now: NodeReady") is None
    assert parse_change("t", "n1", "") is None
