"""What a failed API call is reported as: whether a change may have been made."""

from __future__ import annotations

from urllib3.exceptions import ConnectTimeoutError, MaxRetryError, NewConnectionError, ReadTimeoutError

from app.kube.errors import translate


def test_a_refused_connection_says_nothing_was_changed():
    refused = MaxRetryError(None, "/api/v1/nodes/n/status", NewConnectionError(None, "Connection refused"))
    err = translate(refused)
    assert "nothing was sent, so nothing was changed" in err.message
    assert "may or may not" not in err.message and err.status != 504
    connect = translate(MaxRetryError(None, "/api", ConnectTimeoutError(None, "connect timed out")))
    assert "nothing was changed" in connect.message


def test_a_read_timeout_says_the_change_may_have_been_made():
    err = translate(MaxRetryError(None, "/api", ReadTimeoutError(None, "/api", "read timed out")))
    assert "may or may not have been made" in err.message and err.status == 504
