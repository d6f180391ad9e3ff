"""A paged list links the first and last pages, two either side of this one, and the previous
and next: never one link a page."""

from __future__ import annotations

from bs4 import BeautifulSoup
from flask import render_template_string

NAV = '{% from "_pages.html" import pages_nav %}{{ pages_nav("overview.index", page, pages, {"q": "x"}) }}'


def pager(app, page: int, pages: int) -> list[str]:
    with app.test_request_context("/"):
        html = render_template_string(NAV, page=page, pages=pages)
    nav = BeautifulSoup(html, "html.parser").select_one("nav.pages")
    return [] if nav is None else nav.get_text(" ", strip=True).split()


def test_fifty_pages_are_a_handful_of_links(app):
    assert pager(app, 1, 50) == ["1", "2", "3", "…", "50", "Next"]
    assert pager(app, 25, 50) == ["Previous", "1", "…", "23", "24", "25", "26", "27", "…", "50", "Next"]
    assert pager(app, 50, 50) == ["Previous", "1", "…", "48", "49", "50"]
    assert pager(app, 2, 3) == ["Previous", "1", "2", "3", "Next"]
    assert pager(app, 1, 1) == []


def test_the_links_keep_the_other_arguments_and_mark_this_page(app):
    with app.test_request_context("/"):
        html = render_template_string(NAV, page=3, pages=9)
    nav = BeautifulSoup(html, "html.parser").select_one("nav.pages")
    assert nav.select_one("[aria-current=page]").get_text() == "3"
    assert nav.select_one("a[rel=next]")["href"] == "/?page=4&q=x"
    assert nav.select_one("a[rel=prev]")["href"] == "/?page=2&q=x"
