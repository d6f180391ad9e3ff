"""Requests made raw: the ApiClient's configuration, auth and connection pool, but none of its
generated API classes.

Why: importing ``CoreV1Api`` builds the pydantic models it names, ~0.6 s and ~21 MiB in a
fresh process, before its first list could even begin; and every call the app makes reads or
writes JSON it decodes itself (msgspec, orjson) anyway. A non-2xx answer raises ApiException,
as the generated calls do, so ``app.kube.api.errors.translate`` reads it the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from app.kube.api.errors import TooLong

if TYPE_CHECKING:
    from kubernetes import client

JSON = "application/json"
JSON_PATCH = "application/json-patch+json"  # a list of operations


def request(
    api: client.ApiClient,
    method: str,
    path: str,
    query: dict[str, Any] | None,
    timeout: float | tuple[float, float],
    payload: Any = None,
    content_type: str = JSON,
) -> Any:
    """urllib3's response, its body not yet read (``body`` reads it)."""
    headers = {"Accept": JSON}
    if payload is not None:
        headers["Content-Type"] = content_type
    method, url, headers, _, post = api.param_serialize(
        method,
        path,
        query_params=list((query or {}).items()),
        header_params=headers,
        auth_settings=["BearerToken"],
    )
    resp = api.call_api(
        method,
        url,
        header_params=headers,
        body=payload,  # encoded by the client (json.dumps) for a JSON content type
        post_params=post,
        _request_timeout=timeout,
    )
    if not 200 <= resp.status <= 299:
        from kubernetes.client.exceptions import ApiException  # loaded with the client ``api`` is

        resp.read()
        raise ApiException.from_response(http_resp=resp, body=None, data=None)
    return resp.response


def get(api: client.ApiClient, path: str, query: dict[str, Any], timeout: float | tuple[float, float]) -> Any:
    return request(api, "GET", path, query, timeout)


READ_PIECE = 256 * 1024  # bytes asked of the connection at a time


def body(resp: Any, most: int | None = None) -> bytearray:
    """A raw response's whole body, grown in one buffer as it arrives; its connection goes back to
    the pool. Read in one call (``resp.data``), a chunked body - every list - is held twice at its
    end: http.client keeps its pieces and then joins them (a 6 MiB page of 500 pods, 12 MiB).
    ``most``: past that many bytes TooLong is raised."""
    whole = bytearray()
    try:
        for piece in resp.stream(READ_PIECE, decode_content=True):
            whole += piece
            if most is not None and len(whole) > most:
                resp.close()  # not read to its end: its connection is closed, not reused
                raise TooLong(most)
        return whole
    finally:
        resp.release_conn()


def call(
    api: client.ApiClient,
    method: str,
    path: str,
    timeout: float,
    *,
    query: dict[str, Any] | None = None,
    payload: Any = None,
    content_type: str = JSON,
) -> Any:
    """The decoded JSON answer of one request."""
    return orjson.loads(body(request(api, method, path, query, timeout, payload, content_type)))
