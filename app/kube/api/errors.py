"""Our own errors for API server failures, with messages fit for a page."""

from __future__ import annotations

import json
import sys
from http import HTTPStatus
from typing import TYPE_CHECKING

from urllib3.exceptions import ConnectTimeoutError, MaxRetryError
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import TimeoutError as Urllib3Timeout

from app.domain.numbers import bounded_int

if TYPE_CHECKING:
    from kubernetes.client.exceptions import ApiException


class KubeError(Exception):
    """An API call failed. ``message`` is ours, fit for any page; ``detail`` is what the API server
    or the connection said (addresses, object and user names, its own wording): for the log only.
    ``status`` is the HTTP code (0 if none)."""

    status = 0
    title = "The API server could not be reached"

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail[:2000]
        if status is not None:
            self.status = status


class Forbidden(KubeError):
    status = 403
    title = "Not allowed"


class Unauthorized(KubeError):
    """401: the credentials were not accepted. A sibling of Forbidden, not a kind of it: who is not
    known is a different answer from who may not (``except Forbidden`` never swallows a 401)."""

    status = 401
    title = "Not signed in"


class NotFound(KubeError):
    status = 404
    title = "Not found"


class Conflict(KubeError):
    """Changed under you; ``reason`` says how (the wording is chosen from it, ``conflict_words``)."""

    status = 409
    title = "Changed since you loaded it"
    STALE = "stale"  # a resourceVersion older than the object's (409)
    TEST = "test"  # a JSON Patch test failed: the value moved between read and write (422)
    MOVED = "moved"  # not the value the user saw, found before writing (its message says both)

    def __init__(
        self, message: str, status: int | None = None, detail: str = "", reason: str = STALE
    ) -> None:
        super().__init__(message, status, detail)
        self.reason = reason


def conflict_words(node: str, err: Conflict) -> str:
    """What a change refused as a conflict tells its user, by how it conflicted."""
    if err.reason == Conflict.MOVED:
        return err.message  # "you saw 4, it is now 6"
    if err.reason == Conflict.TEST:
        return TEST_FAILED
    return f"{node} changed since you loaded it. Nothing was changed; try again."


def http_status(err: KubeError) -> int:
    """The HTTP status a page answers for ``err``: a conflict is 409 however the API server said it
    (a failed patch test is its 422), a refusal or a missing object its own status, anything
    without a 4xx/5xx status 503."""
    if isinstance(err, Conflict):
        return 409
    return err.status if 400 <= err.status < 600 else 503


def refused(err: KubeError) -> bool:
    """Whether the API server refused who asked (401: not accepted; 403: not allowed)."""
    return isinstance(err, (Unauthorized, Forbidden))


class Invalid(KubeError):
    status = 422
    title = "Refused by the API server"

    def __init__(
        self, message: str, status: int | None = None, causes: list[str] | None = None, detail: str = ""
    ) -> None:
        super().__init__(message, status, detail)
        self.causes = causes or []


class BadRequest(KubeError):
    """400: the API server did not take a parameter (an older server, a feature gate off)."""

    status = 400
    title = "Not understood by the API server"


class TooLarge(KubeError):
    """413: the request's body is larger than the API server takes."""

    status = 413
    title = "Too large for the API server"


class Gone(KubeError):
    status = 410
    title = "Resource version too old"


class Unavailable(KubeError):
    status = 503
    title = "The API server is unavailable"


class AnswerTooLarge(Unavailable):
    """The server answered more than is read of one answer (a member's, most likely): refused, and
    said so apart from a server that does not answer."""

    title = "The API server's answer was refused"


class Busy(KubeError):
    """429: too many requests, here (a budget that protects the API server is spent) or at the
    API server; ``retry_after`` in seconds when known."""

    status = 429
    title = "Too many requests"

    def __init__(self, message: str, status: int | None = None, detail: str = "", retry_after: int = 0):
        super().__init__(message, status, detail)
        self.retry_after = retry_after


class NotConfigured(KubeError):
    title = "No cluster configured"


def _status(exc: ApiException) -> tuple[str, list[str]]:
    """The Status body's message, and its causes as the fields they name (with the kind of
    problem): structured parts, not the server's free text."""
    try:
        body = json.loads(exc.body or b"{}")
        causes = [
            f"{str(c.get('field'))[:120]} ({str(c.get('reason') or 'invalid')[:40]})"
            for c in (body.get("details") or {}).get("causes") or ()
            if c.get("field")
        ]
        return str(body.get("message") or exc.reason or ""), causes[:10]
    except (ValueError, TypeError, AttributeError, RecursionError):
        return str(exc.reason or ""), []


TEST_FAILED = (
    "The value changed since you loaded it (the patch's test failed). "
    "Nothing was changed; reload and try again."
)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "an unknown status"


# What each status the API server answers becomes: one table (422 and 429 have a word more below)
BY_STATUS: dict[int, tuple[type[KubeError], str]] = {
    400: (BadRequest, "The API server did not understand the request."),
    401: (Unauthorized, "The API server did not accept the credentials."),
    403: (Forbidden, "The API server refused this request: the account may not do it."),
    404: (NotFound, "It does not exist (any more)."),
    409: (Conflict, "It changed since you loaded it; reload and try again."),
    410: (Gone, "The resource version is too old."),
    413: (TooLarge, "The API server refused the request as too large."),
    422: (Invalid, "The API server refused the change as invalid."),
    429: (Busy, "The API server is busy (429 Too Many Requests); nothing was done. Try again shortly."),
}


def _retry_after(exc: ApiException) -> int:
    """The Retry-After the API server sent, in whole seconds (0: none, or not a number)."""
    raw = str((exc.headers or {}).get("Retry-After", "")).strip()
    return min(bounded_int(raw, 0) or 0, 3600)


def from_api_exception(exc: ApiException) -> KubeError:
    status = int(exc.status or 0)
    detail, causes = _status(exc)
    detail = f"{status} {detail}"
    if status == 422 and ("testing value" in detail.lower() or "test operation" in detail.lower()):
        return Conflict(TEST_FAILED, 422, detail, reason=Conflict.TEST)
    if status == 422 and causes:
        message = "The API server refused the change as invalid: " + "; ".join(causes) + "."
        return Invalid(message, causes=causes, detail=detail)
    if status == 429:
        wait = _retry_after(exc)
        message = BY_STATUS[429][1] + (f" It asks to wait {wait} s (Retry-After)." if wait else "")
        return Busy(message, detail=detail, retry_after=wait)
    if status in BY_STATUS:
        kind, message = BY_STATUS[status]
        return kind(message, status, detail=detail)
    if status == 0:
        return Unavailable("Could not talk to the API server.", detail=f"{exc.reason or exc}")
    if status >= 500:
        return Unavailable(f"The API server answered {status} ({_phrase(status)}).", status, detail)
    return KubeError(f"The API server answered {status} ({_phrase(status)}).", status, detail)


def _api_exception() -> type[ApiException] | None:
    """The client's ApiException once the client is loaded (none can be raised before): reading
    errors never loads the Kubernetes client itself."""
    loaded = sys.modules.get("kubernetes.client.exceptions")
    return getattr(loaded, "ApiException", None)


class TooLong(ValueError):
    """An answer longer than its reader takes (after decompression: a server may send gzip
    unasked, and 0.7 MB of it can be 780 MiB)."""

    def __init__(self, most: int, what: str = "an answer") -> None:
        self.most, self.what = most, what
        super().__init__(f"{what} over {most // (1 << 20) or 1} MiB, the most read of one")


class Inflated(TooLong):
    """An answer compressed though no compression was asked for (``Accept-Encoding: identity``, as
    every API server honours), inflating more than ``ratio`` to 1: a bomb, refused before it
    fills its bound."""

    def __init__(self, ratio: int, coding: str = "") -> None:
        said = (
            f"an answer compressed unasked in {coding}"
            if coding
            else f"an answer compressed unasked, inflating more than {ratio} to 1"
        )
        ValueError.__init__(self, said)
        self.most, self.what = 0, "an answer"


class TooMuchAtOnce(TooLong):
    """A cluster's answers being read at once past that cluster's own bound: its server sends more
    than is read of it, whichever answer passed the bound."""

    def __init__(self, most: int) -> None:
        said = f"this cluster's answers being read at once over {most >> 20} MiB, the most held"
        ValueError.__init__(self, said)
        self.most, self.what = most, "this cluster's answers"


class Crowded(TooLong):
    """An answer that found no room among those read from every cluster at once."""

    def __init__(self, most: int, waited: float) -> None:
        ValueError.__init__(
            self,
            f"answers being read at once reached {most >> 20} MiB, the most held together, and this one "
            f"waited {waited:g} s",
        )
        self.most, self.what = most, "answers held at once"


def translate(exc: BaseException) -> KubeError:
    """Map any failure of an API call to a KubeError."""
    if isinstance(exc, KubeError):
        return exc
    api_exception = _api_exception()
    if api_exception is not None and isinstance(exc, api_exception):
        return from_api_exception(exc)
    if isinstance(exc, Crowded):  # no room now among every cluster's answers: read again later
        return Unavailable(f"Busy: {exc}.", 503, detail=str(exc))
    if isinstance(exc, TooLong):  # the server answered, more than is read of one: said so
        return AnswerTooLarge(f"Refused: answer too large ({exc}).", 502, detail=str(exc))
    cause = exc.reason if isinstance(exc, MaxRetryError) else exc
    # Refused, or no connection made in time (urllib3's NewConnectionError is a kind of
    # ConnectTimeoutError): no byte of the request left, so nothing can have changed.
    detail = f"{type(cause).__name__}: {cause}"
    if isinstance(cause, ConnectTimeoutError):
        return Unavailable(
            "Could not connect to the API server: nothing was sent, so nothing was changed.", detail=detail
        )
    if isinstance(cause, (Urllib3Timeout, TimeoutError)):
        return Unavailable(
            "The API server did not answer in time (EXTRES_REQUEST_TIMEOUT). A change sent may or may "
            "not have been made: look at the node before trying again.",
            504,
            detail,
        )
    if isinstance(exc, (Urllib3Error, OSError, TimeoutError)):
        return Unavailable("Could not talk to the API server (the connection failed).", detail=detail)
    return KubeError("Unexpected failure talking to the API server.", detail=detail)
