"""One selector evaluator, chosen by a setting (EXTRES_SELECTOR_EVALUATOR): the pages are the same
with either; a class's expressions are compiled once, when the class arrives, by the evaluator
(pages read the kept answer); what cannot be decided is counted by reason in the worker; and with
the sandbox the worker never loads the native CEL runtime."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from bs4 import BeautifulSoup

from app.domain import selector_answers
from app.domain.devices import ClassFacts
from app.kube.wire.dra import ClassView
from app.sandbox import cel_sandbox
from app.web.process import of as process_of
from tests.web.test_dra_views import GPU, R, devices


def cluster_with_classes(cluster) -> None:
    cluster.node("n1", {})
    store = cluster.store
    store.devices.put("deviceclasses", ClassView(ClassFacts("gpus", "t", R, (f'device.driver == "{GPU}"',))))
    store.devices.put("deviceclasses", ClassView(ClassFacts("broken", "t", "", ("device.driver ==",))))
    store.devices.put(
        "deviceclasses",
        ClassView(ClassFacts("odd", "t", "example.com/odd", ('device.attributes["x.io"].y == 1',))),
    )
    store.devices.put("resourceslices", devices("n1", 3))
    cluster.dra = "served"


@pytest.mark.parametrize("kind", ["sandboxed", "in-process"])
def test_either_evaluator_gives_the_same_pages(make_app, cluster, kind):
    app = make_app(selector_evaluator=kind)
    assert process_of(app).local.answers.kind == kind
    assert cluster.store.devices.answers is process_of(app).local.answers  # given to the store
    cluster_with_classes(cluster)
    web = app.test_client()
    page = BeautifulSoup(web.get("/devices/").get_data(as_text=True), "html.parser")
    gpus = {
        td["data-field"]: td.get_text(strip=True)
        for td in page.select('tr[data-class="gpus"] td[data-field]')
    }
    assert gpus["devices"] == "3"
    assert "does not compile" in page.select_one('tr[data-class="broken"]').get_text()
    overview = web.get("/").get_data(as_text=True)
    assert "data-unknown" in overview and "x.io" in overview
    metrics = process_of(app).local.metrics.exposition().decode()
    assert 'extres_selector_undecided_total{reason="does not compile"}' in metrics


def test_a_class_compiles_once_when_it_arrives_never_on_a_pages_time(make_app, cluster, monkeypatch):
    answers = process_of(make_app(selector_evaluator="in-process")).local.answers
    asked: list[list[str]] = []
    checking = answers.check

    def counted(expressions: list[str]) -> list[str | None]:
        asked.append(expressions)
        return checking(expressions)

    monkeypatch.setattr(answers, "check", counted)
    fresh = 'device.driver == "compiled-once.example.com"'
    cluster.store.devices.put("deviceclasses", ClassView(ClassFacts("once", "t", "", (fresh,))))
    cluster.store.devices.put("deviceclasses", ClassView(ClassFacts("once", "t2", "", (fresh,))))  # again
    assert asked == [[fresh]]
    assert answers.compile_error(fresh) is None
    assert answers.compile_error("never seen") == selector_answers.NOT_CHECKED


def test_an_unknown_evaluator_is_refused_by_name(make_app):
    with pytest.raises(ValueError, match="SELECTOR_EVALUATOR"):
        make_app(selector_evaluator="elsewhere")
    with pytest.raises(ValueError, match="no selector evaluator 'elsewhere'"):
        cel_sandbox.answers("elsewhere")


WORKER = """
import json, sys
from app import create_app
from tests.web.fake import FakeCluster
from tests.web.test_selector_evaluator import cluster_with_classes
cluster = FakeCluster()
app = create_app({"in_cluster": "false", "selector_evaluator": sys.argv[1]}, cluster=cluster)
cluster_with_classes(cluster)
web = app.test_client()
pages = [web.get(p).status_code for p in ("/", "/devices/", "/nodes/n1")]
print(json.dumps({"pages": pages, "runtime": "cel_expr_python" in sys.modules}))
"""


@pytest.mark.parametrize(("kind", "loaded"), [("sandboxed", False), ("in-process", True)])
def test_with_the_sandbox_the_worker_never_loads_the_native_runtime(kind, loaded):
    out = subprocess.run([sys.executable, "-c", WORKER, kind], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"pages": [200, 200, 200], "runtime": loaded}
