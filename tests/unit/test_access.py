"""Access decisions while the API server does not answer: nothing waits on a timeout."""

from __future__ import annotations

import pytest
from kubernetes import client

from app.kube.api.access import Access, Identity
from app.kube.api.errors import Unavailable


def access(down: list[bool]) -> tuple[Access, list[tuple[str, str]]]:
    asked: list[tuple[str, str]] = []
    waits.clear()
    a = Access(client.Configuration(), client.ApiClient(client.Configuration()), unreachable=lambda: down[0])

    def review(identity, verb, resource, subresource="", timeout=None, namespace=""):
        asked.append((verb, resource) if not namespace else (verb, resource, namespace))
        waits.append(timeout)
        return verb == "list"

    a._review = review  # type: ignore[method-assign]
    return a, asked


ANN = Identity(user="ann", mode="impersonate")
waits: list[float | None] = []  # the timeout of each review sent


def test_renewing_an_answer_already_given_waits_briefly_before_the_api_server_is_known_down():
    """Before /readyz tells that the API server hangs, a page renewing an expired answer waits
    RECHECK_TIMEOUT at most (then the old answer stands); a first answer gets the full timeout."""
    from app.kube.api.access import RECHECK_TIMEOUT

    a, _ = access([False])
    assert a.check(ANN, "list", "pods")
    for key in list(a._checks):
        a._checks[key] = (a._checks[key][0] - 3600, a._checks[key][1])
    assert a.check(ANN, "list", "pods")
    assert waits == [None, RECHECK_TIMEOUT]


def test_a_namespaced_answer_is_asked_and_kept_apart_from_the_cluster_wide_one():
    a, asked = access([False])
    assert a.check(ANN, "get", "pods", namespace="team-a") is False
    assert a.check(ANN, "list", "pods") and a.check(ANN, "list", "pods", namespace="team-a")
    assert asked == [("get", "pods", "team-a"), ("list", "pods"), ("list", "pods", "team-a")]


def test_answers_given_stand_past_their_ttl_while_the_api_server_is_down():
    down = [False]
    a, asked = access(down)
    assert a.check(ANN, "list", "pods") and not a.check(ANN, "patch", "nodes")
    assert len(asked) == 2
    down[0] = True
    for key in list(a._checks):  # long past the 30 s TTL
        a._checks[key] = (a._checks[key][0] - 3600, a._checks[key][1])
    assert a.check(ANN, "list", "pods") and not a.check(ANN, "patch", "nodes")
    assert len(asked) == 2  # nothing sent to wait on


def test_a_new_question_while_the_api_server_is_down_is_answered_at_once():
    a, asked = access([True])
    with pytest.raises(Unavailable, match="cannot be verified now"):
        a.check(ANN, "list", "pods")
    assert not a.allowed(ANN, "patch", "nodes", "status")  # forms stay hidden
    assert asked == []


def test_a_token_never_seen_cannot_be_verified_while_the_api_server_is_down():
    a, _ = access([True])
    with pytest.raises(Unavailable):
        a.authenticate(Identity(token="abc", mode="token"))


def test_tokens_not_seen_lately_are_reviewed_within_one_budget_and_known_ones_still_pass():
    """Random tokens (a sign-in form, an Authorization header on any path) cost at most
    ``reviews_per_minute`` TokenReviews; past it a new token gets Busy (429) before any call,
    while a token already accepted is answered from the cache."""
    from app.kube.api.errors import Busy

    reviewed: list[str] = []
    a = Access(client.Configuration(), client.ApiClient(client.Configuration()), reviews_per_minute=3)

    def review_token(identity, timeout=None):
        reviewed.append(identity.token)
        return "ann" if identity.token == "good" else None

    a._review_token = review_token  # type: ignore[method-assign]
    good = Identity(token="good", mode="token")
    assert a.authenticate(good, "10.0.0.1") is not None and a.accepted_lately(good)
    assert a.authenticate(Identity(token="r1", mode="token"), "10.0.0.1") is None
    assert a.authenticate(Identity(token="r2", mode="token"), "10.0.0.1") is None
    with pytest.raises(Busy, match="Too many unknown tokens"):
        a.authenticate(Identity(token="r3", mode="token"), "10.0.0.1")
    assert reviewed == ["good", "r1", "r2"]
    assert a.authenticate(good, "10.0.0.1") is not None  # cached: no review, no budget
    assert not a.accepted_lately(Identity(token="r1", mode="token"))


def test_one_address_spends_its_own_budget_and_refused_tokens_never_push_out_accepted_ones():
    """130 random bearers from one address: that address is refused past its own budget, the
    shared budget is mostly left, another address's new token is still reviewed; and more refused
    tokens than the cache holds never push out a token accepted lately."""
    from app.kube.api.access import REVIEWS_PER_CLIENT, TOKENS_KEPT
    from app.kube.api.errors import Busy

    reviewed: list[str] = []
    a = Access(client.Configuration(), client.ApiClient(client.Configuration()), reviews_per_minute=120)

    def review_token(identity, timeout=None):
        reviewed.append(identity.token)
        return "ann" if identity.token.startswith("good") else None

    a._review_token = review_token  # type: ignore[method-assign]
    good = Identity(token="good", mode="token")
    assert a.authenticate(good, "10.0.0.1") is not None
    busy = 0
    for i in range(130):
        try:
            a.authenticate(Identity(token=f"random-{i}", mode="token"), "192.0.2.66")
        except Busy:
            busy += 1
    assert busy == 130 - REVIEWS_PER_CLIENT and len(reviewed) == 1 + REVIEWS_PER_CLIENT
    assert a.authenticate(Identity(token="good-new", mode="token"), "10.0.0.2") is not None
    # clients of unknown address (behind a proxy not trusted) spend at most half the shared budget
    unknown = 0
    for i in range(130):
        try:
            a.authenticate(Identity(token=f"stranger-{i}", mode="token"), None)
        except Busy:
            unknown += 1
    assert 130 - unknown == 60  # half of the shared 120
    assert a.authenticate(Identity(token="good-known", mode="token"), "10.0.0.4") is not None
    a._refused.update((f"r{i}", (1e12, None)) for i in range(TOKENS_KEPT + 10))  # a long stream
    a.authenticate(Identity(token="refused-last", mode="token"), "10.0.0.3")
    assert a.accepted_lately(good) and a.authenticate(good, "10.0.0.1") is not None
    assert len(a._refused) <= TOKENS_KEPT
