"""Hostile requests and hostile cluster data. Every abusive request is refused with a readable
answer (never a 500 or a stack trace) and changes nothing: the node's resourceVersion is the
same afterwards. Text from the cluster that Kubernetes does not restrict (scheduler messages,
annotations) is shown escaped on every page; CSV cells never start a formula."""

from __future__ import annotations

import json
import socket

import pytest
from bs4 import BeautifulSoup

from app.domain import changes
from app.web.export import cell
from tests.helpers import eventually
from tests.kube_helpers import create_pod, snapshot
from tests.serving import Server

pytestmark = pytest.mark.kube
D = "example.com/dongle"
SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
JS = "javascript:alert(3)"


def readable(resp) -> str:
    text = resp.get_data(as_text=True)
    assert "Traceback" not in text and resp.status_code != 500, (resp.status_code, text[:300])
    return text


# Form and query abuse, through the Flask app: (method, path with {node}, form or None, statuses)
ABUSE = [
    (
        "POST",
        "/changes/nodes/{node}/resources",
        "resource=example.com/dongle&quantity=3&quantity=5&expected=4",
        (422,),
    ),
    (
        "POST",
        "/changes/nodes/{node}/resources",
        "resource=example.com/dongle&resource=acme.io/fpga&quantity=1",
        (422,),
    ),
    (
        "POST",
        "/changes/nodes/{node}/resources",
        "resource=example.com/dongle&quantity=%ff%fe&expected=4",
        (422,),
    ),
    ("POST", "/changes/nodes/{node}/resources", "resource=example.com%2fdong%00le&quantity=1", (422,)),
    ("POST", "/changes/nodes/{node}/resources", "resource=%c3%28&quantity=1", (422,)),
    (
        "POST",
        "/changes/nodes/{node}/resources",
        "resource=example.com/dongle&quantity=3%00&expected=4",
        (422,),
    ),
    ("POST", "/changes/nodes/{node}/resources", "resource=" + "a" * 5000 + ".com/x&quantity=1", (422,)),
    (
        "POST",
        "/changes/nodes/{node}/resources/remove",
        "resource=example.com/dongle&resource=example.com/dongle",
        (422,),
    ),
    ("POST", "/changes/nodes/{node}%00/resources", "resource=example.com/dongle&quantity=1", (404,)),
    ("POST", "/changes/nodes/" + "n" * 5000 + "/resources", "resource=example.com/dongle&quantity=1", (404,)),
    ("POST", "/changes/nodes/%ff%fe/resources", "resource=example.com/dongle&quantity=1", (404,)),
    (
        "POST",
        "/changes/bulk/apply",
        "action=set&action=remove&resource=example.com/dongle&quantity=2&selector=group%3D{uid}",
        (422,),
    ),
    ("POST", "/changes/bulk/apply", "action=set&resource=example.com/dongle&quantity=2&selector=%00", (422,)),
    (
        "POST",
        "/changes/bulk/apply",
        "action=set&resource=example.com/dongle&quantity=2&nodes={node}%00",
        (422,),
    ),
    ("GET", "/?q=%00&selector=%ff", None, (200, 422)),
    ("GET", "/?page=-1", None, (200,)),
    ("GET", "/?page=99999999999999999999999999", None, (200,)),
    ("GET", "/?selector=" + "a%3Db," * 2000, None, (200, 422)),
    ("GET", "/nodes/" + "n" * 5000, None, (404,)),
    ("GET", "/nodes/%00", None, (404,)),
    ("GET", "/pending/?resource=%3Cscript%3E&namespace=%00", None, (200,)),
    ("GET", "/export.csv?selector=%ff%fe", None, (200, 422)),
]


@pytest.mark.parametrize(
    ("method", "path", "form", "statuses"),
    ABUSE,
    ids=[f"{m} {p[:50]} {f or ''}"[:90] for m, p, f, _ in ABUSE],
)
def test_abusive_requests_are_refused_and_change_nothing(web, core, node, uid, method, path, form, statuses):
    before = snapshot(core, node)
    url = path.format(node=node, uid=uid)
    if method == "POST":
        token = web.csrf_for()
        body = (form or "").format(node=node, uid=uid) + f"&csrf_token={token}"
        resp = web.post(url, data=body, content_type="application/x-www-form-urlencoded")
    else:
        resp = web.get(url)
    text = readable(resp)
    assert resp.status_code in statuses, (resp.status_code, text[:300])
    if resp.status_code == 422 and "was sent" in text:
        assert "send it once" in text
    assert snapshot(core, node) == before


def test_oversized_headers_are_refused_by_the_server(control_plane, core, node):
    server = Server(control_plane)
    try:
        before = snapshot(core, node)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n")
            answer = s.recv(4096).decode(errors="replace")
        assert answer.startswith("HTTP/1.1 4"), answer[:200]  # 400/431: refused before the app
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(
                b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(500)) + b"\r\n"
            )
            answer = s.recv(4096).decode(errors="replace")
        assert answer.startswith("HTTP/1.1 4"), answer[:200]
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"GET /nodes/\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = s.recv(4096).decode(errors="replace")
        assert answer.split(" ")[1] in ("400", "404"), answer[:200]
        assert snapshot(core, node) == before
    finally:
        server.stop()


def test_hostile_cluster_text_is_escaped_on_every_page(web, core, node, uid):
    """Scheduler messages and annotations are free text in Kubernetes: HTML, scripts and
    javascript: links in them must come out as text."""
    pod = f"{uid}-p"
    # a scheduler of another name: kube-scheduler, if running, leaves the condition below alone
    create_pod(core, pod, None, {D: "9"}, schedulerName="not-kube-scheduler")
    message = f'0/1 nodes are available: 1 Insufficient {D}, 1 {SCRIPT} {IMG} <a href="{JS}">x</a>.'
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    core.patch_namespaced_pod_status(pod, "default", {"status": {"conditions": [condition]}})
    hostile = json.dumps({D: 4, 'example.com/"><script>alert(4)</script>': 1, JS: 2})
    core.patch_node(node, {"metadata": {"annotations": {changes.DESIRED_ANNOTATION: hostile}}})
    eventually(lambda: pod in web.get("/pending/").get_data(as_text=True))
    pages = [
        "/",
        f"/nodes/{node}",
        "/pending/",
        f"/pending/?namespace=default&resource={D}",
        "/plan/",
        f"/changes/bulk?find={uid}",
        "/changes/reapply",
        "/export.json",
        "/export.csv",
    ]
    for path in pages:
        resp = web.get(path)
        text = readable(resp)
        assert resp.status_code == 200, path
        assert "<script>alert" not in text and "onerror=" not in text.replace("onerror=&#34;", ""), path
        soup = BeautifulSoup(text, "html.parser")
        assert not soup.find_all(attrs={"onerror": True}), path
        assert all(s.get("src", "").startswith("/static/") for s in soup.find_all("script")), path
        assert not [
            a for a in soup.find_all("a") if a.get("href", "").strip().lower().startswith("javascript:")
        ], path
    assert SCRIPT.replace("<", "&lt;").replace(">", "&gt;") in web.get("/pending/").get_data(as_text=True)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("node-1", "node-1"),
        (-3, -3),  # an overcommitted node's free amount stays a number
    ],
)
def test_csv_cells_never_start_a_formula(value, shown):
    assert cell(value) == shown
