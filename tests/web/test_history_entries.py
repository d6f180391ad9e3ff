"""Every answer to a POST that is not a redirect (a refusal, a notice, a conflict, an over-commitment
to confirm, a sign-in refused) names a GET URL for its history entry (``HX-Push-Url``) whose
answer is the same page: Back, Forward and Reload to it never send the form again and never meet
a 405. The browser side (Chromium through each action) is tests/browser/test_history.py."""

from __future__ import annotations

from bs4 import BeautifulSoup

from tests.helpers import browser

D = "example.com/dongle"
SET = "/changes/nodes/n1/resources"


def shown(resp) -> dict[str, object]:
    """What a set form's page says: its message, each field's error and the values it carries."""
    html = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    form = html.select_one("form.change")
    return {
        "flash": " ".join(p.get_text(" ", strip=True) for p in html.select("main .flash")),
        "errors": {
            e["id"]: e.get_text(strip=True) for e in html.select(".field-error") if e.get_text(strip=True)
        },
        "values": {
            i["name"]: i.get("value", "") for i in form.select("input[name]") if i["name"] != "csrf_token"
        },
        "impact": [e["data-over-committed"] for e in html.select("[data-over-committed]")],
    }


def again(client, resp):
    """The answer to the GET URL a POST's answer named for its history entry."""
    url = resp.headers["HX-Push-Url"]
    assert url.startswith("/changes/nodes/n1/resources/new?") and "check=1" in url, url
    return client.get(url)


def test_each_answer_to_a_save_is_the_answer_of_its_history_entrys_get(client, cluster):
    cluster.node("n1", {D: "4"})
    cluster.pod("a", "n1", {D: "3"})
    cases = {
        "refused": {"resource": D, "quantity": "1.5", "expected": "4"},
        "already advertised": {"resource": D, "quantity": "6", "expected": ""},
        "over-committing": {"resource": D, "quantity": "2", "expected": "4"},
        "changed meanwhile": {"resource": D, "quantity": "7", "expected": "3"},
    }
    statuses = {}
    for case, form in cases.items():
        posted = client.post(SET, data=form)
        restored = again(client, posted)
        statuses[case] = (posted.status_code, restored.status_code)
        assert shown(restored) == shown(posted), case
    assert cluster.apiserver.patches() == []  # nothing was written, by any of them
    assert statuses == {  # the GET's a 200 (htmx's history restore swaps no 4xx), its words the same
        "refused": (422, 200),
        "already advertised": (200, 200),
        "over-committing": (200, 200),
        "changed meanwhile": (409, 200),
    }
    conflict = shown(again(client, client.post(SET, data=cases["changed meanwhile"])))
    assert "you saw 3, it is now 4" in conflict["errors"]["expected-error"]
    assert conflict["values"]["expected"] == "4"  # a second Save is decided on what is there now


def test_a_write_is_a_redirect_and_the_get_of_a_stale_entry_shows_the_form_as_now(client, cluster):
    cluster.node("n1", {D: "4"})
    form = {"resource": D, "quantity": "5", "expected": "4"}
    done = client.post(SET, data=form)
    assert done.status_code == 303 and "HX-Push-Url" not in done.headers
    # Back to an entry made before the change: the form of what is there now, nothing re-sent
    page = client.get(f"{SET}/new?resource={D}&quantity=6&expected=5&check=1")
    assert page.status_code == 200 and shown(page)["values"]["expected"] == "5"
    assert len(cluster.apiserver.patches()) == 1


def test_back_onto_a_notice_after_its_save_says_it_is_done_rather_than_asking_again(client, cluster):
    cluster.node("n1", {D: "4"})
    notice = client.post(SET, data={"resource": D, "quantity": "6", "expected": ""})
    assert "Save to change it to 6" in shown(notice)["flash"]
    saved = client.post(SET, data=shown(notice)["values"])  # the notice's Save: written
    assert saved.status_code == 303 and len(cluster.apiserver.patches()) == 1
    client.get(saved.headers["Location"])  # the node page, its flash said there
    back = shown(again(client, notice))  # Back onto the notice: as things are now
    assert back["flash"] == f"{D} on n1 is 6 now, as this form asks: nothing to change."
    assert back["values"]["expected"] == "6" and back["errors"] == {}
    # a conflict's entry alike (its Save had said "changed since you loaded it: you saw 5")
    conflict = client.get(f"{SET}/new?resource={D}&quantity=6&expected=5&check=1")
    assert "nothing to change" in shown(conflict)["flash"] and shown(conflict)["errors"] == {}
    assert len(cluster.apiserver.patches()) == 1


def test_a_refused_bulk_form_names_a_get_url_that_answers_the_same_refusal(client, cluster):
    cluster.node("n1", {D: "4"})
    form = {"action": "set", "resource": D, "quantity": "0.5", "nodes": "n1"}
    posted = client.post("/changes/bulk/preview", data=form)
    url = posted.headers["HX-Push-Url"]
    assert posted.status_code == 422 and url.startswith("/changes/bulk?") and "csrf_token" not in url
    restored = client.get(url)
    errors = [
        e.get_text(strip=True)
        for e in BeautifulSoup(restored.get_data(as_text=True), "html.parser").select(".field-error")
        if e.get_text(strip=True)
    ]
    assert restored.status_code == 200 and errors and "0.5" in " ".join(errors)
    plain = client.get("/changes/bulk?action=set&resource=x")  # no check: the form, nothing refused
    assert plain.status_code == 200


def test_a_refused_sign_in_marks_its_field_and_its_entry_is_the_sign_in_page(make_app, cluster):
    cluster.access.refused_tokens = {"bad"}
    web = browser(make_app(auth_mode="token"))
    resp = web.post("/login", data={"token": "bad", "next": "/pending/"})
    html = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert resp.status_code == 401 and resp.headers["HX-Push-Url"] == "/login?next=/pending/"
    assert html.select_one("input[name=token]")["aria-invalid"] == "true"
    assert "Not signed in" in html.select_one(".flash.error").get_text()
    assert "bad" not in resp.headers["HX-Push-Url"]  # the token never goes into a URL
    assert web.get(resp.headers["HX-Push-Url"]).status_code == 200
