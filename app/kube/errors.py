"""Our own errors for API server failures, with messages fit for a page."""

from __future__ import annotations

import json

from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import TimeoutError as Urllib3Timeout


class KubeError(Exception):
    """An API call failed; ``message`` is readable, ``status`` the HTTP code (0 if none)."""

    status = 0
    title = "The API server could not be reached"

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class Forbidden(KubeError):
    status = 403
    title = "Not allowed"


class NotFound(KubeError):
    status = 404
    title = "Not found"


class Conflict(KubeError):
    """409 (stale resourceVersion) or 422 from a failed JSON Patch ``test``: changed under you."""

    status = 409
    title = "Changed since you loaded it"


class Invalid(KubeError):
    status = 422
    title = "Refused by the API server"

    def __init__(self, message: str, status: int | None = None, causes: list[str] | None = None) -> None:
        super().__init__(message, status)
        self.causes = causes or []


class Gone(KubeError):
    status = 410
    title = "Resource version too old"


class Unavailable(KubeError):
    status = 503
    title = "The API server is unavailable"


class NotConfigured(KubeError):
    title = "No cluster configured"


def _status(exc: ApiException) -> tuple[str, list[str]]:
    """The Status body's message and its details' causes."""
    try:
        body = json.loads(exc.body or b"{}")
        causes = [
            str(c.get("message") or "")
            for c in (body.get("details") or {}).get("causes") or ()
            if c.get("message")
        ]
        return str(body.get("message") or exc.reason or ""), causes
    except (ValueError, TypeError, AttributeError):
        return str(exc.reason or ""), []


TEST_FAILED = (
    "The value changed since you loaded it (the patch's test failed). "
    "Nothing was changed; reload and try again."
)


def from_api_exception(exc: ApiException) -> KubeError:
    status = int(exc.status or 0)
    message, causes = _status(exc)
    if status in (401, 403):
        return Forbidden(message or "The API server refused this request.", status)
    if status == 404:
        return NotFound(message or "It does not exist (any more).")
    if status == 409:
        return Conflict(message or "It changed since you loaded it; reload and try again.")
    if status == 410:
        return Gone(message or "The resource version is too old.")
    if status == 422:
        if "testing value" in message.lower() or "test operation" in message.lower():
            return Conflict(TEST_FAILED, 422)
        if causes:
            return Invalid("; ".join(causes), causes=causes)
        return Invalid(message or "The API server refused the change as invalid.")
    if status == 0:
        return Unavailable(f"Could not talk to the API server: {exc.reason or exc}")
    if status == 429 or status >= 500:
        return Unavailable(f"The API server answered {status}: {message or exc.reason}", status)
    return KubeError(f"The API server answered {status}: {message or exc.reason}", status)


def translate(exc: BaseException) -> KubeError:
    """Map any failure of an API call to a KubeError."""
    if isinstance(exc, KubeError):
        return exc
    if isinstance(exc, ApiException):
        return from_api_exception(exc)
    cause = exc.reason if isinstance(exc, MaxRetryError) else exc
    # Refused, or no connection made in time (urllib3's NewConnectionError is a kind of
    # ConnectTimeoutError): no byte of the request left, so nothing can have changed.
    if isinstance(cause, ConnectTimeoutError):
        return Unavailable(
            f"Could not connect to the API server ({type(cause).__name__}): nothing was sent, so nothing "
            "was changed."
        )
    if isinstance(cause, (Urllib3Timeout, TimeoutError)):
        return Unavailable(
            "The API server did not answer in time (EXTRES_REQUEST_TIMEOUT). A change sent may or may "
            "not have been made: look at the node before trying again.",
            504,
        )
    if isinstance(exc, (Urllib3Error, OSError, TimeoutError)):
        return Unavailable(f"Could not talk to the API server: {type(exc).__name__}: {exc}")
    return KubeError(f"Unexpected failure talking to the API server: {type(exc).__name__}: {exc}")
