"""Every aria-describedby names an element the page renders (an empty message until there is one)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from tests.helpers import browser, pages_of


def test_every_described_by_target_is_rendered_on_every_page(app, client, cluster):
    cluster.node("n1", {"example.com/dongle": "2"})
    pages = pages_of(app)
    assert {"/", "/pending/", "/changes/bulk", "/nodes/n1", "/changes/nodes/n1/resources/new"} <= set(pages)
    missing = {}
    for path in pages:
        soup = BeautifulSoup(client.get(path).get_data(as_text=True), "html.parser")
        refs = [ref for el in soup.select("[aria-describedby]") for ref in el["aria-describedby"].split()]
        if lost := [ref for ref in refs if soup.find(id=ref) is None]:
            missing[path] = lost
    assert missing == {}


def test_the_sign_in_form_describes_its_field(make_app):
    soup = BeautifulSoup(
        browser(make_app(auth_mode="token")).get("/login").get_data(as_text=True), "html.parser"
    )
    assert all(soup.find(id=el["aria-describedby"]) for el in soup.select("[aria-describedby]"))


def test_no_error_message_is_part_of_a_fields_name_on_any_page(app, client, cluster):
    """An error inside its <label> becomes part of the field's accessible name ("Resource
    Resource name 'foo' must be…"), and aria-describedby says it again: messages sit beside."""
    cluster.node("n1", {"example.com/dongle": "2"})
    inside = {}
    for path in pages_of(app):
        soup = BeautifulSoup(client.get(path).get_data(as_text=True), "html.parser")
        if found := soup.select("label .field-error, label [role=alert]"):
            inside[path] = len(found)
    assert inside == {}


def test_a_refused_field_is_named_once_and_described_by_its_message(client, cluster):
    cluster.node("n1", {"example.com/dongle": "2"})
    resp = client.post(
        "/changes/nodes/n1/resources", data={"resource": "foo", "quantity": "2", "expected": ""}
    )
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    field = soup.select_one('form.change input[name="resource"][aria-invalid="true"]')
    assert field.find_parent("label").get_text(" ", strip=True) == "Resource"
    assert "foo" in soup.find(id=field["aria-describedby"]).get_text()
