"""What the intake decides of a connection's bytes (app/serving/http_intake.py), without a socket."""

from __future__ import annotations

import ipaddress

import pytest

from app.serving.http_intake import MAX_HEAD, Arrival, Budget, Refused, client_key


def arrived(*chunks: bytes, max_body: int = 100) -> Arrival:
    arrival = Arrival(deadline=0.0, max_body=max_body)
    for chunk in chunks:
        arrival.feed(chunk)
    return arrival


def test_a_request_is_whole_by_its_head_and_its_length():
    assert not arrived(b"GET / HTTP/1.1\r\nHost: x\r\n").whole
    assert arrived(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").whole
    post = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
    assert not arrived(post, b"abc").whole
    assert arrived(post, b"abc", b"de").whole


def test_a_head_split_anywhere_is_found_whole():
    request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    for cut in range(1, len(request)):
        assert arrived(request[:cut], request[cut:]).whole, cut


def test_chunked_bodies_are_whole_at_their_last_chunk_and_trailers_not_at_a_lookalike():
    head = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert not arrived(head, b"20\r\n0\r\n\r\n").whole  # data that ends like the last chunk
    assert not arrived(head, b"3;name=value\r\nabc\r\n0\r\n").whole  # its trailers not ended
    assert arrived(head, b"3;name=value\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n").whole


def test_what_follows_a_whole_request_is_kept_for_later_not_framed_now():
    arrival = arrived(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /next HT")
    assert arrival.whole and arrival.data.endswith(b"GET /next HT")
    arrival.feed(b"garbage that is the next request's concern")  # never parsed with this one
    assert arrival.data.endswith(b"concern")


def test_expect_100_continue_is_asked_for_once_the_head_is_in_on_http_1_1_only():
    head = b"POST / HTTP/1.%d\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
    arrival = arrived(head % 1)
    assert arrival.wants_continue and not arrival.whole
    arrival.feed(b"abc")
    assert arrival.whole
    assert not arrived(head % 0).wants_continue  # RFC 9110 10.1.1: ignored in HTTP/1.0


@pytest.mark.parametrize(
    ("chunks", "status"),
    [
        ([b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1234567890123\r\n\r\n"], 413),
        ([b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n"], 413),
        ([b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", b"65\r\n" + b"c" * 101], 413),
        ([b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"h" * 9000 + b"\r\n\r\n"], 431),
        ([b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Many: h\r\n" * (MAX_HEAD // 11 + 1)], 431),
        ([b"GET /" + b"p" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"], 414),
        ([b"NOT HTTP\r\n\r\n"], 400),
        (  # a trailer field past the field limit, arrived whole with its CRLF
            [
                b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: "
                + b"y" * 9000
                + b"\r\n\r\n"
            ],
            431,
        ),
        ([b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"], 400),
    ],
    ids=[
        "13 digits",
        "one over",
        "chunked over",
        "a long line",
        "a long head never ended",
        "a long URL",
        "not HTTP",
        "a long trailer field",
        "two lengths",
    ],
)
def test_a_request_that_can_never_be_served_is_refused_with_its_status(chunks, status):
    with pytest.raises(Refused) as refused:
        arrived(*chunks)
    assert refused.value.status == status
    answer = refused.value.answer()
    assert answer.startswith(b"HTTP/1.1 %d " % status) and b"Connection: close\r\n" in answer


def test_the_budget_is_shared_and_given_back():
    budget = Budget(10)
    assert budget.take(6) and not budget.take(5) and budget.take(4)
    budget.give(6)
    assert budget.take(6) and budget.held == 10


NETS = (ipaddress.ip_network("10.0.0.0/24"),)


@pytest.mark.parametrize(
    ("peer", "key"),
    [
        (("192.0.2.7", 5000), "192.0.2.7"),
        (("::ffff:192.0.2.7", 5000, 0, 0), "192.0.2.7"),
        (("2001:db8:1:2:aaaa::1", 5000, 0, 0), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:ffff::9", 5000, 0, 0), "2001:db8:1:2::/64"),  # one host's whole /64
        (("fe80::1%eth0", 5000, 0, 2), "fe80::/64"),
        (("10.0.0.9", 5000), None),  # a trusted proxy: every user behind it shares its address
        ("/run/extres.sock", None),
        ((), None),
    ],
)
def test_a_connection_counts_against_its_address_or_its_64(peer, key):
    assert client_key(peer, NETS) == key


def test_the_forwarders_connections_are_not_limited_per_address():
    """Behind the chart's ingress every user arrives from the controller's few addresses: its
    kept-alive connections must not turn the next user away (the NetworkPolicy admits no one else)."""
    from app.serving.http_intake import Limits
    from app.settings.config import Settings

    limits = Limits.of(Settings(trusted_proxies=("127.0.0.1",), forwarders=("0.0.0.0/0", "::/0")))
    assert client_key(("10.244.1.7", 5000), limits.exempt) is None
    assert client_key(("fd00::7", 5000, 0, 0), limits.exempt) is None
    assert client_key(("10.244.1.7", 5000), Limits.of(Settings()).exempt) == "10.244.1.7"
