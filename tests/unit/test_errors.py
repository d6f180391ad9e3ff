"""What a failed API call is reported as: whether a change may have been made."""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError, NewConnectionError, ReadTimeoutError

from app.kube.api.errors import translate


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


@pytest.mark.parametrize(
    ("status", "kind", "title"),
    [
        (401, "Unauthorized", "Not signed in"),
        (403, "Forbidden", "Not allowed"),
        (404, "NotFound", "Not found"),
        (409, "Conflict", "Changed since you loaded it"),
        (410, "Gone", "Resource version too old"),
        (422, "Invalid", "Refused by the API server"),
        (429, "Busy", "Too many requests"),
        (503, "Unavailable", "The API server is unavailable"),
    ],
)
def test_each_status_has_its_own_kind_of_error(status, kind, title):
    err = translate(api_error(status, {"message": "x"}))
    assert (type(err).__name__, err.status, err.title) == (kind, status, title)


def test_a_429_keeps_its_retry_after():
    from app.kube.api.errors import Busy

    busy = api_error(429, {})
    busy.headers = {"Retry-After": "7"}
    err = translate(busy)
    assert isinstance(err, Busy) and err.retry_after == 7
    odd = api_error(429, {})
    odd.headers = {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}
    assert translate(odd).retry_after == 0  # a date: not trusted, the page's own default applies


def test_a_bare_422_has_no_causes_and_keeps_the_servers_words_in_the_detail():
    """The writer reads a bare 422 (no causes) as a failed JSON Patch test."""
    err = translate(api_error(422, {"message": "the server rejected our request", "details": {}}))
    assert err.causes == [] and "the server rejected our request" in err.detail


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH"])
def test_a_429_with_retry_after_comes_back_as_busy_never_retried(method):
    """A local server answers every request 429 with Retry-After: 7 (as a busy API server's
    priority and fairness does): one request reaches it, whatever the method, and the caller gets
    Busy naming the wait, not a failed connection after urllib3 waited and retried."""
    import http.server
    import threading

    from kubernetes import client

    from app.kube.api import raw
    from app.kube.api.client import api_client
    from app.kube.api.errors import Busy, translate

    seen: list[str] = []

    class Busy429(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            seen.append(self.command)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(429)
            self.send_header("Retry-After", "7")
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"kind":"Status","message":"too many requests","code":429}')

        do_GET = do_PUT = do_PATCH = answer

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Busy429)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conf = client.Configuration()
    conf.host = f"http://127.0.0.1:{server.server_address[1]}"
    api = api_client(conf)
    try:
        with pytest.raises(Exception) as caught:
            raw.call(api, method, "/api/v1/nodes/x", 5, payload=None if method == "GET" else [])
        err = translate(caught.value)
        assert isinstance(err, Busy) and err.retry_after == 7 and "wait 7 s" in err.message, err.message
        assert seen == [method]
    finally:
        server.shutdown()
        server.server_close()
        api.close()


def test_401_and_403_are_siblings_so_catching_one_never_swallows_the_other():
    from kubernetes.client import ApiException

    from app.kube.api.errors import Forbidden, Unauthorized, translate

    unauthorized, forbidden = translate(ApiException(status=401)), translate(ApiException(status=403))
    assert isinstance(unauthorized, Unauthorized) and not isinstance(unauthorized, Forbidden)
    assert isinstance(forbidden, Forbidden) and not isinstance(forbidden, Unauthorized)


def test_a_conflict_says_how_it_conflicted_and_is_always_a_409_to_the_page():
    from kubernetes.client import ApiException

    from app.kube.api.errors import TEST_FAILED, Conflict, conflict_words, http_status, translate

    stale = translate(ApiException(status=409))
    assert isinstance(stale, Conflict) and stale.reason == Conflict.STALE
    assert conflict_words("n1", stale) == "n1 changed since you loaded it. Nothing was changed; try again."
    test = Conflict(TEST_FAILED, 422, reason=Conflict.TEST)
    assert (conflict_words("n1", test), http_status(test)) == (TEST_FAILED, 409)
    moved = Conflict("x on n1 changed since you loaded it: you saw 4, it is now 6.", reason=Conflict.MOVED)
    assert conflict_words("n1", moved) == moved.message
    assert http_status(translate(ApiException(status=0))) == 503
    assert http_status(translate(ApiException(status=404))) == 404
