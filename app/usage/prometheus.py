"""The operator's Prometheus, asked through requests (its query API is one GET), bounded: a query
takes at most ``timeout`` seconds in all (Prometheus is told so too, and the body is read
against a deadline), its answer at most ``max_bytes``, and nothing is retried (the next refresh
asks again). prometheus-api-client did this job until most of it was overridden (its session,
its decoding, its headers, its retries); ``bench/prometheus_query_client.py`` measured the two in one
run before it went (its dateparser, pytz, regex and tzlocal went with it)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from app.domain.usage_mapping import KEY, Sample
from app.usage.poller import UsageUnavailable

CHUNK = 64 * 1024


class _Labels(msgspec.Struct):
    key: str = msgspec.field(name=KEY, default="")  # every query here keeps this one label


class _Sample(msgspec.Struct):
    metric: _Labels
    value: tuple[float, str]  # "42", "NaN", "+Inf": float() reads them all


class _Data(msgspec.Struct):
    result: list[_Sample]


class _Answer(msgspec.Struct):
    data: _Data


# decoded straight into slim structs: a 40,000-series answer never becomes 40,000 dicts
_ANSWER = msgspec.json.Decoder(_Answer)


class _BoundedSession(requests.Session):
    """A session that reads each answer against a byte limit and an overall deadline (requests'
    own timeout bounds each socket read, not a body that trickles)."""

    def __init__(self, max_bytes: int, timeout: float) -> None:
        super().__init__()
        self.max_bytes = max_bytes
        self.timeout = timeout

    def request(  # type: ignore[override]
        self, method: str, url: str, *args: Any, **kwargs: Any
    ) -> requests.Response:
        kwargs["stream"] = True
        kwargs["allow_redirects"] = False  # the operator named this Prometheus, not where it points
        deadline = time.monotonic() + self.timeout
        response = super().request(method, url, *args, **kwargs)
        # past the deadline the connection is shut: a read blocked on a trickle returns at once
        watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _shut, (response,))
        watchdog.daemon = True
        watchdog.start()
        chunks, size = [], 0
        try:
            for chunk in response.iter_content(CHUNK):
                size += len(chunk)
                if size > self.max_bytes:
                    raise UsageUnavailable(f"its answer is larger than {self.max_bytes:,} bytes")
                chunks.append(chunk)
        except requests.RequestException:
            if time.monotonic() >= deadline:
                raise UsageUnavailable(f"its answer took longer than {self.timeout:g} s") from None
            raise
        finally:
            watchdog.cancel()
            response.close()
        if time.monotonic() >= deadline:
            raise UsageUnavailable(f"its answer took longer than {self.timeout:g} s")
        response._content = b"".join(chunks)
        return response


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")  # left out by the reading


def _timed_out(exc: BaseException) -> bool:
    """Whether a failed request ran out of time: requests turns urllib3's exhausted retries
    (``Retry(total=0)``: every one) into a ConnectionError whatever their reason, a read timeout
    too."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    errors = urllib3.exceptions
    if isinstance(reason, errors.NewConnectionError):  # refused, unreachable (a TimeoutError subclass)
        return False
    return isinstance(reason, errors.ReadTimeoutError | errors.ConnectTimeoutError)


def _shut(response: requests.Response) -> None:
    """Shut the response's socket (urllib3 hands it to http.client's reader, whose socket this
    reaches; where it cannot be found the socket timeout still bounds each read)."""
    reader = getattr(getattr(response.raw, "_fp", None), "fp", None)
    sock = getattr(getattr(reader, "raw", None), "_sock", None)
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class Prometheus:
    def __init__(
        self,
        url: str,
        token_file: str | None = None,
        ca_file: str | None = None,
        timeout: float = 5.0,
        max_bytes: int = 64 << 20,
    ) -> None:
        self.url = url
        self.token_file = token_file
        self.timeout = timeout
        self._session = _BoundedSession(max_bytes, timeout)
        self._session.verify = ca_file or True
        self._session.mount(url, HTTPAdapter(max_retries=Retry(total=0)))  # never retried here

    def query(self, expr: str, at: float | None = None) -> list[Sample]:
        """An instant query's samples, as (the KEY label, the value), at ``at`` (a Unix time;
        default: now); UsageUnavailable otherwise."""
        headers = {"Accept": "application/json"}
        if self.token_file:
            try:
                token = Path(self.token_file).read_text().strip()
            except OSError as exc:
                raise UsageUnavailable(f"its token file cannot be read: {exc.strerror}") from None
            headers["Authorization"] = f"Bearer {token}"
        params = {"query": expr, "timeout": f"{self.timeout:g}s"}
        if at is not None:
            params["time"] = f"{at:.3f}"
        try:
            response = self._session.get(
                f"{self.url.rstrip('/')}/api/v1/query", params=params, headers=headers, timeout=self.timeout
            )
        except requests.Timeout:
            raise UsageUnavailable(f"it did not answer within {self.timeout:g} s") from None
        except requests.RequestException as exc:
            if _timed_out(exc):  # with retries off, urllib3's read timeout reaches here as a ConnectionError
                raise UsageUnavailable(f"it did not answer within {self.timeout:g} s") from None
            raise UsageUnavailable(f"it cannot be reached: {_in_words(exc)}", str(exc)[:300]) from None
        if response.status_code != 200:
            # its words (a body, a redirect) are logged, never shown: an operator's server speaks
            said = f"HTTP {response.status_code}"
            if 300 <= response.status_code < 400:
                said += " (a redirect, not followed: set EXTRES_PROMETHEUS_URL to where it points)"
            detail = f"HTTP Status Code {response.status_code} ({response.content[:400]!r})"
            raise UsageUnavailable(f"it answered the query with {said}", detail) from None
        try:
            answer = _ANSWER.decode(response.content)
        except msgspec.ValidationError as exc:
            raise UsageUnavailable(f"its answer is not an instant vector: {str(exc)[:120]}") from None
        except msgspec.DecodeError:
            raise UsageUnavailable("its answer is not the query API's JSON") from None
        return [(r.metric.key, _number(r.value[1])) for r in answer.data.result]

    def close(self) -> None:
        self._session.close()


def _in_words(exc: requests.RequestException) -> str:
    """What failed, for a reader (the exception's own words go to the log only)."""
    if isinstance(exc, requests.exceptions.SSLError):
        return "its TLS certificate was not accepted (EXTRES_PROMETHEUS_CA_FILE names the CA that signed it)"
    if isinstance(exc, requests.exceptions.ConnectionError):
        return "no connection could be made to it (refused, or no route to its address)"
    if isinstance(exc, (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema)):
        return "EXTRES_PROMETHEUS_URL is not a URL it can be asked at"
    return "the request to it failed"
