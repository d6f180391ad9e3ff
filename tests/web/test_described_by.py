"""Every aria-describedby names an element the page renders (an empty message until there is one)."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from tests.conftest import browser

PAGES = ["/", "/pending/", "/plan/", "/workloads/", "/history/", "/changes/bulk", "/nodes/n1", "/devices/"]


@pytest.mark.parametrize("path", PAGES)
def test_every_described_by_target_is_rendered(client, cluster, path):
    cluster.node("n1", {"example.com/dongle": "2"})
    soup = BeautifulSoup(client.get(path).get_data(as_text=True), "html.parser")
    missing = [
        ref
        for el in soup.select("[aria-describedby]")
        for ref in el["aria-describedby"].split()
        if soup.find(id=ref) is None
    ]
    assert missing == [], path


def test_the_sign_in_form_describes_its_field(make_app):
    soup = BeautifulSoup(
        browser(make_app(auth_mode="token")).get("/login").get_data(as_text=True), "html.parser"
    )
    assert all(soup.find(id=el["aria-describedby"]) for el in soup.select("[aria-describedby]"))
