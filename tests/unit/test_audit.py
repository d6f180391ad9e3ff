"""The audit trail's one format, the JSON log lines, and the client address behind proxies."""

from __future__ import annotations

import io
import json
import logging

import pytest

from app.base import audit, logs
from app.web.security import client_address, networks


def test_every_audit_line_has_the_fixed_fields_and_control_characters_stay_escaped(caplog):
    caplog.set_level(logging.INFO, logger="extres.audit")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.Formatter(logs.FORMAT))
    audit.LOGGER.addHandler(handler)
    try:
        audit.record(
            "refused",
            audit.Who('alice\n{"outcome": "changed"}', ("ops",), "10.1.2.3", "r1"),
            node="n\x1b[31m1",
            reason="may not patch nodes/status",
            status=403,
        )
        audit.record("bulk_started", audit.Who(), resource="example.com/dongle", new=3, nodes=2)
    finally:
        audit.LOGGER.removeHandler(handler)
    text = stream.getvalue()
    assert "\x1b" not in text and text.count("\n") == 2  # one line each, whatever the names held
    first, second = (json.loads(line) for line in text.splitlines())
    for line in (first, second):
        assert set(audit.FIELDS) | {"time", "level", "logger", "message"} <= set(line)
        assert line["time"].endswith("Z") and line["logger"] == "extres.audit"
    assert (first["outcome"], first["level"], first["node"], first["status"]) == (
        "refused",
        "WARNING",
        "n\x1b[31m1",
        403,
    )
    assert first["user"].startswith("alice\n") and first["groups"] == ["ops"]
    assert (second["outcome"], second["level"], second["user"], second["node"]) == (
        "bulk_started",
        "INFO",
        None,
        None,
    )


def test_an_unknown_outcome_or_detail_is_a_programming_error():
    with pytest.raises(ValueError, match="outcome"):
        audit.record("deleted", audit.Who())
    with pytest.raises(ValueError, match="details"):
        audit.record("changed", audit.Who(), message="clashes with the log record's own field")


TRUSTED = networks(["10.0.0.0/24"])


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("192.0.2.7", "203.0.113.9", "192.0.2.7"),  # not a proxy: its header is ignored
        ("10.0.0.5", "203.0.113.9", "203.0.113.9"),  # the ingress names the client
        ("10.0.0.5", "198.51.100.1, 203.0.113.9, 10.0.0.4", "203.0.113.9"),  # past every trusted hop
        ("10.0.0.5", "", "10.0.0.5"),  # nothing forwarded: the proxy itself
        ("10.0.0.5", "not-an-address, 10.0.0.4", "10.0.0.4"),  # garbage stops at the hop that sent it
        ("10.0.0.5", "10.0.0.3, 10.0.0.4", "10.0.0.3"),  # only proxies: the farthest one
    ],
)
def test_the_client_address_is_read_through_the_trusted_proxies_only(peer, forwarded, client):
    assert client_address(peer, forwarded, TRUSTED) == client


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("10.9.0.5", "203.0.113.9", "203.0.113.9"),  # the entry the forwarder added
        ("10.9.0.5", "198.51.100.1, 203.0.113.9", "203.0.113.9"),  # never what the client sent it
        ("10.9.0.5", "198.51.100.1, 10.0.0.4", "198.51.100.1"),  # then on past trusted proxies only
        ("10.9.0.5", "", "10.9.0.5"),
        ("192.0.2.7", "203.0.113.9", "192.0.2.7"),  # neither: its header is ignored
    ],
)
def test_a_forwarder_is_believed_for_the_one_entry_it_adds(peer, forwarded, client):
    assert client_address(peer, forwarded, TRUSTED, networks(["10.9.0.0/16"])) == client


def test_the_logging_config_sends_gunicorn_and_the_app_through_one_json_handler():
    quiet, loud = logs.config("INFO"), logs.config("DEBUG", access_log=True)
    assert quiet["loggers"]["gunicorn.access"]["level"] == "WARNING"
    assert loud["loggers"]["gunicorn.access"]["level"] == "INFO" and loud["root"]["level"] == "DEBUG"
    for name in ("gunicorn.error", "gunicorn.access", "extres.audit"):
        assert quiet["loggers"][name]["propagate"] and quiet["loggers"][name]["handlers"] == []
