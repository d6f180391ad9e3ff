"""What a failed API call is reported as: whether a change may have been made."""

from __future__ import annotations

import json

from kubernetes.client.exceptions import ApiException
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


def api_error(status: int, body: dict) -> ApiException:
    exc = ApiException(status=status, reason="reason")
    exc.body = json.dumps(body).encode()
    return exc


def test_the_api_servers_own_words_go_to_the_detail_never_the_message():
    said = 'nodes "gpu-7" is forbidden: User "system:serviceaccount:x:y" cannot patch resource "nodes/status"'
    err = translate(api_error(403, {"message": said}))
    assert "gpu-7" not in err.message and "system:serviceaccount" not in err.message
    assert said in err.detail and err.status == 403
    boom = translate(api_error(500, {"message": "etcdserver: leader changed at 10.0.0.7:2379"}))
    assert (
        boom.message == "The API server answered 500 (Internal Server Error)." and "10.0.0.7" in boom.detail
    )
    refused = translate(MaxRetryError(None, "/api", NewConnectionError(None, "10.0.0.1:6443 refused")))
    assert "10.0.0.1" not in refused.message and "10.0.0.1" in refused.detail


def test_an_invalid_change_names_the_fields_not_the_servers_text():
    body = {
        "message": 'Node "n" is invalid: status.capacity[x/y]: Invalid value: "<script>": must be an integer',
        "details": {
            "causes": [
                {"reason": "FieldValueInvalid", "message": "<script>", "field": "status.capacity[x/y]"}
            ]
        },
    }
    err = translate(api_error(422, body))
    assert (
        err.message
        == "The API server refused the change as invalid: status.capacity[x/y] (FieldValueInvalid)."
    )
    assert "<script>" not in err.message and "<script>" in err.detail
