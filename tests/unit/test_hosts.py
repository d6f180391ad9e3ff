"""The Host allow-list (app/domain/hosts.py): DNS rebinding names another site as the Host."""

from __future__ import annotations

import pytest

from app.domain.hosts import allowed, entry_error, host_allowed, host_name


@pytest.mark.parametrize(
    ("header", "hosts", "answered"),
    [
        ("127.0.0.1:8080", allowed((), "127.0.0.1"), True),
        ("localhost:31337", allowed((), "127.0.0.1"), True),  # a port-forward's local port
        ("[::1]:8080", allowed((), "127.0.0.1"), True),
        ("LOCALHOST.", allowed((), "127.0.0.1"), True),
        ("rebind.attacker.example:8080", allowed((), "127.0.0.1"), False),  # DNS rebinding
        ("127.0.0.1.nip.io:8080", allowed((), "127.0.0.1"), False),
        ("10.0.0.5:8080", allowed((), "0.0.0.0"), False),  # a wildcard listen address names nothing
        ("extres.example.com", ("extres.example.com",), True),
        ("Extres.Example.com:443", ("extres.example.com",), True),
        ("a.teams.example.com", (".teams.example.com",), True),
        ("a.teams.example.com", ("*.teams.example.com",), True),
        ("teams.example.com", ("*.teams.example.com",), True),
        ("eviltems.example.com", (".teams.example.com",), False),
        ("anything:1", ("*",), True),
        ("[0:0:0:0:0:0:0:1]:80", ("::1",), True),
        ("", ("*",), False),
        ("a b", ("*",), False),
        ("host:99999", ("*",), False),
        ("host:8080:1", ("*",), False),
        ("[zz::1]", ("*",), False),
    ],
)
def test_only_the_names_the_dashboard_is_served_under_are_answered(header, hosts, answered):
    assert host_allowed(header, hosts) is answered


def test_entries_are_checked_with_a_message_naming_the_bad_one():
    assert [entry_error(e) for e in ("*", ".x.io", "*.x.io", "::1", "a.io:8080", "10.0.0.1")] == [""] * 6
    assert "'a/b' is not a host name" in entry_error("a/b")
    assert host_name("[::ffff:127.0.0.1]:1") == "::ffff:7f00:1"
