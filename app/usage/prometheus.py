"""The operator's Prometheus, asked through prometheus-api-client, bounded: a query takes at most
``timeout`` seconds in all (Prometheus is told so too, and the body is read against a deadline),
its answer at most ``max_bytes``, and nothing is retried (the next refresh asks again)."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import requests
import urllib3
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.util.retry import Retry

from app.domain.usage_mapping import KEY, Sample
from app.usage.poller import UsageUnavailable

CHUNK = 64 * 1024
_STATUS = re.compile(r"HTTP Status Code (\d{3})")  # how prometheus-api-client words a refusal


class _Labels(msgspec.Struct):
    key: str = msgspec.field(name=KEY, default="")  # every query here keeps this one label


class _Sample(msgspec.Struct):
    metric: _Labels
    value: tuple[float, str]  # "42", "NaN", "+Inf": float() reads them all


class _Data(msgspec.Struct):
    result: list[_Sample]

    def __getitem__(self, name: str) -> list[_Sample]:  # the client reads ["data"]["result"]
        return self.result if name == "result" else []


_ANSWER = msgspec.json.Decoder(dict[str, _Data | str])


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
        # decoded straight into slim structs: a 40,000-series answer never becomes 40,000 dicts
        response.json = lambda **_: _ANSWER.decode(response.content)  # type: ignore[method-assign]
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
        session = _BoundedSession(max_bytes, timeout)
        session.verify = ca_file or True
        self._client = PrometheusConnect(url=url, session=session, timeout=timeout, retry=Retry(total=0))

    def query(self, expr: str) -> list[Sample]:
        """An instant query's samples, as (the KEY label, the value); UsageUnavailable otherwise."""
        if self.token_file:
            try:
                token = Path(self.token_file).read_text().strip()
            except OSError as exc:
                raise UsageUnavailable(f"its token file cannot be read: {exc.strerror}") from None
            self._client.headers = {"Authorization": f"Bearer {token}"}
        try:
            result = self._client.custom_query(expr, params={"timeout": f"{self.timeout:g}s"})
        except PrometheusApiClientException as exc:
            # its words (a body, a redirect) are logged, never shown: an operator's server speaks
            status = _STATUS.search(str(exc))
            said = f"HTTP {status.group(1)}" if status else "an error"
            if status and status.group(1).startswith("3"):
                said += " (a redirect, not followed: set EXTRES_PROMETHEUS_URL to where it points)"
            raise UsageUnavailable(f"it answered the query with {said}", str(exc)[:500]) from None
        except msgspec.ValidationError as exc:
            raise UsageUnavailable(f"its answer is not an instant vector: {str(exc)[:120]}") from None
        except (msgspec.DecodeError, ValueError, KeyError, TypeError):
            raise UsageUnavailable("its answer is not the query API's JSON") from None
        except requests.Timeout:
            raise UsageUnavailable(f"it did not answer within {self.timeout:g} s") from None
        except requests.RequestException as exc:
            if _timed_out(exc):  # with retries off, urllib3's read timeout reaches here as a ConnectionError
                raise UsageUnavailable(f"it did not answer within {self.timeout:g} s") from None
            raise UsageUnavailable(f"it cannot be reached: {type(exc).__name__}", str(exc)[:300]) from None
        return [(r.metric.key, _number(r.value[1])) for r in result]

    def close(self) -> None:
        self._client.close()
