"""The JSON Patches a change sends, exactly (golden): the riskiest code, checked without an API
server. The same patches are sent to a real one in tests/integration/test_changes.py."""

from __future__ import annotations

from app.domain.changes import remove_patch, set_patch
from app.domain.names import escape_json_pointer

D, F = "example.com/dongle", "acme.io/fpga"
ANNOTATION = "/metadata/annotations/extres.dev~1desired-capacity"


def test_json_pointer_escapes_tilde_before_slash():
    assert escape_json_pointer("example.com/dongle") == "example.com~1dongle"
    assert escape_json_pointer("a~1/b") == "a~01~1b"  # a literal "~1" is not read back as "/"


def test_setting_a_resource_present_tests_the_value_read_and_adds_to_the_annotation():
    patch = set_patch(
        D,
        6,
        raw_current="4",
        resource_version="77",
        annotations={"extres.dev/desired-capacity": '{"acme.io/fpga":"2"}'},
    )
    assert patch == [
        {"op": "test", "path": "/status/capacity/example.com~1dongle", "value": "4"},
        {"op": "add", "path": "/status/capacity/example.com~1dongle", "value": "6"},
        {"op": "add", "path": ANNOTATION, "value": '{"acme.io/fpga":"2","example.com/dongle":"6"}'},
    ]


def test_setting_a_resource_absent_tests_the_resource_version_and_makes_the_annotations():
    patch = set_patch(F, 2, raw_current=None, resource_version="78", annotations=None)
    assert patch == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "78"},
        {"op": "add", "path": "/status/capacity/acme.io~1fpga", "value": "2"},
        {
            "op": "add",
            "path": "/metadata/annotations",
            "value": {"extres.dev/desired-capacity": '{"acme.io/fpga":"2"}'},
        },
    ]


def test_removing_the_last_desired_resource_removes_the_annotation():
    patch = remove_patch(
        D,
        raw_current="2k",
        resource_version="79",
        annotations={"extres.dev/desired-capacity": '{"example.com/dongle":"2000"}'},
    )
    assert patch == [
        {"op": "test", "path": "/status/capacity/example.com~1dongle", "value": "2k"},  # the text read
        {"op": "remove", "path": "/status/capacity/example.com~1dongle"},
        {"op": "remove", "path": ANNOTATION},
    ]


def test_removing_a_resource_never_set_here_leaves_the_annotations_alone():
    patch = remove_patch(D, raw_current="1", resource_version="80", annotations={"other": "x"})
    assert patch == [
        {"op": "test", "path": "/status/capacity/example.com~1dongle", "value": "1"},
        {"op": "remove", "path": "/status/capacity/example.com~1dongle"},
    ]
