"""The libraries' private internals the app reaches, listed here and nowhere else, each with a
fast test that fails when a new version moves it (the lock pins versions; this says which pin
an upgrade must look at):

1. gunicorn's gthread worker (app/serving/http_worker.py subclasses it): ``ThreadWorker.accept``,
   ``enqueue_req``, ``handle_request``, ``finish_request``, ``murder_pending``; the attributes
   its ``__init__`` sets (``poller``, ``nr_conns``, ``keepalived_conns``,
   ``worker_connections``); ``TConn``'s ``sock``, ``parser``, ``initialized``, ``init``.
2. requests' ``Response._content`` (app/usage/prometheus.py: a body read in bounded chunks is
   set as the response's content).
3. urllib3's ``HTTPResponse._fp`` and http.client's ``fp.raw._sock`` (app/usage/prometheus.py
   ``_shut``: the socket shut when Prometheus' answer is past its deadline).
4. the kubernetes client's ``ApiClient.rest_client.pool_manager`` (app/kube/api/access.py: the
   impersonation headers) and ``_request_timeout`` of ``RESTClientObject.request`` and
   ``ApiClient.call_api`` (app/kube/api/raw.py, app/kube/api/readiness.py).
"""

from __future__ import annotations

import inspect
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests
from gunicorn.workers.gthread import TConn, ThreadWorker


def test_gunicorns_thread_worker_keeps_what_the_buffering_worker_overrides_and_reads():
    for method in ("accept", "enqueue_req", "handle_request", "finish_request", "murder_pending"):
        assert callable(getattr(ThreadWorker, method, None)), method
    assert list(inspect.signature(ThreadWorker.enqueue_req).parameters) == ["self", "conn"]
    assert list(inspect.signature(ThreadWorker.finish_request).parameters) == ["self", "conn", "fs"]
    assert list(inspect.signature(ThreadWorker.handle_request).parameters) == ["self", "req", "conn"]
    made = inspect.getsource(ThreadWorker.__init__)
    for attribute in ("self.poller", "self.nr_conns", "self.keepalived_conns", "self.worker_connections"):
        assert attribute in made, attribute
    conn = inspect.getsource(TConn.__init__)
    for attribute in ("self.sock", "self.parser", "self.initialized"):
        assert attribute in conn, attribute
    assert callable(TConn.init) and callable(TConn.close)


def test_a_requests_response_reads_its_content_from_content():
    response = requests.Response()
    response.status_code = 200
    response._content = b'{"status": "success"}'
    assert response.content == b'{"status": "success"}' and response.json() == {"status": "success"}


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "10")
        self.end_headers()
        self.wfile.write(b"12345")
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


def test_a_streamed_responses_socket_is_reached_where_the_usage_reader_shuts_it():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        response = requests.get(f"http://127.0.0.1:{server.server_port}/", stream=True, timeout=5)
        reader = getattr(getattr(response.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(reader, "raw", None), "_sock", None)
        assert isinstance(sock, socket.socket)
        sock.shutdown(socket.SHUT_RDWR)  # as the reader does
        response.close()
        sock.close()
    finally:
        server.shutdown()
        server.server_close()


def test_the_kubernetes_clients_pool_and_request_timeouts_are_where_the_app_sets_them():
    from kubernetes import client

    api = client.ApiClient(client.Configuration())
    assert hasattr(api.rest_client, "pool_manager")
    assert "_request_timeout" in inspect.signature(api.rest_client.request).parameters
    assert "_request_timeout" in inspect.signature(client.ApiClient.call_api).parameters
    assert "auth_settings" in inspect.signature(client.ApiClient.param_serialize).parameters
    api.close()
