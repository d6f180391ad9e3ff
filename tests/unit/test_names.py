import pytest

from app.domain.names import (
    escape_json_pointer,
    extended_resource_name_errors,
    is_extended_resource_name,
    is_native_resource,
    qualified_name_errors,
)

VALID = [
    "example.com/dongle",
    "acme.io/fpga",
    "nvidia.com/gpu",
    "a/b",
    "example.com/Dongle_2.x",
    "sub.example.com/a-b",
    "x" * 241 + ".io/d",  # "requests." + 241 + ".io" = 253 characters
    "example.com/" + "n" * 63,
]
INVALID = [
    ("", "required"),
    ("dongle", "qualified name with a domain"),
    ("cpu", "qualified name with a domain"),
    ("hugepages-2Mi", "qualified name with a domain"),
    ("kubernetes.io/dongle", "kubernetes.io"),
    ("foo.kubernetes.io/dongle", "kubernetes.io"),
    ("requests.example.com/dongle", "requests."),
    ("example.com/", "must not be empty"),
    ("/dongle", "must not be empty"),
    ("Example.com/dongle", "DNS subdomain"),
    ("exa_mple.com/dongle", "DNS subdomain"),
    ("example.com/-dongle", "start and end"),
    ("example.com/dongle-", "start and end"),
    ("example.com/don gle", "start and end"),
    ("example.com/a/b", "at most one '/'"),
    ("example.com/" + "n" * 64, "at most 63"),
    ("x" * 242 + ".io/d", "at most 244"),
    (" example.com/dongle", "spaces"),
]


@pytest.mark.parametrize("name", VALID)
def test_valid_extended_names(name):
    assert extended_resource_name_errors(name) == []
    assert is_extended_resource_name(name)


@pytest.mark.parametrize(("name", "reason"), INVALID)
def test_invalid_extended_names_say_why(name, reason):
    errors = extended_resource_name_errors(name)
    assert errors, name
    assert reason in errors[0]
    assert not is_extended_resource_name(name)


@pytest.mark.parametrize(
    ("name", "native"),
    [
        ("cpu", True),
        ("memory", True),
        ("hugepages-1Gi", True),
        ("kubernetes.io/batteries", True),
        ("a.kubernetes.io/x", True),
        ("example.com/dongle", False),
    ],
)
def test_native_resources(name, native):
    assert is_native_resource(name) is native


def test_qualified_name_without_prefix():
    assert qualified_name_errors("zone") == []
    assert qualified_name_errors("-zone")


@pytest.mark.parametrize(
    ("token", "escaped"),
    [("example.com/dongle", "example.com~1dongle"), ("a~b/c", "a~0b~1c"), ("~1", "~01")],
)
def test_json_pointer_escaping(token, escaped):
    assert escape_json_pointer(token) == escaped


def test_a_mistyped_resource_name_is_matched_to_the_known_ones_it_may_mean():
    from app.domain.names import suggest, unknown_resource

    known = ["nvidia.com/gpu", "example.com/gpu", "example.com/dongle"]
    assert suggest("gpu", known) == ["example.com/gpu", "nvidia.com/gpu"]  # contains it
    assert suggest("nvidia.com/gpus", known)[0] == "nvidia.com/gpu"  # closest by spelling
    assert suggest("acme.io/fpga", known) == [] and suggest("", known) == []
    assert (
        unknown_resource("GPU", known)
        == "No such resource 'GPU'; did you mean example.com/gpu, nvidia.com/gpu?"
    )
