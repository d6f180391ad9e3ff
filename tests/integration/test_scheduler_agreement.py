"""The fit model against the real kube-scheduler: seeded random clusters and pods.

CI runs 300 cases on each tested version, 600 in all (``EXTRES_AGREEMENT_CASES`` changes it;
``bench/agreement.py`` runs 2,000);
``EXTRES_AGREEMENT_SEED`` replays a run. A disagreement prints the case as YAML.
"""

from __future__ import annotations

import os
import random

import pytest
import yaml

from app.kube.api.admission_reads import AdmissionReads
from app.kube.api.watch_wire import server_minor
from app.web.process import of as process_of
from bench.agreement import run
from bench.agreement_cases import replay
from bench.agreement_cluster import admission_objects
from tests.helpers import repo_root

KEPT = sorted((repo_root() / "tests" / "agreement_cases").glob("*.yaml"))


def scheduler_minor(api) -> int:
    return server_minor(api) or 99


pytestmark = [pytest.mark.kube, pytest.mark.scheduler, pytest.mark.compat]


def test_the_fit_model_agrees_with_the_scheduler(app, admin_api, scheduler):
    seed = int(os.environ.get("EXTRES_AGREEMENT_SEED") or random.SystemRandom().randrange(10**6))
    cases = int(os.environ.get("EXTRES_AGREEMENT_CASES", "300"))
    print(f"agreement seed {seed}")
    store = process_of(app).local.cluster.store
    report = run(admin_api, store, cases, seed)
    print(report)
    assert report.cases == cases
    assert not report.failures, "\n---\n".join([str(report), *report.failures])
    # the generator uses only modelled features: inter-pod affinity and topology spread included
    assert not report.undecided_by, report.undecided_by
    assert report.bound and report.unschedulable  # both outcomes were exercised
    assert report.inter_pod  # inter-pod affinity and topology spread decided some cases
    if scheduler_minor(admin_api) >= 36:  # DRAExtendedResource is on: DRA devices were allocated
        assert report.dra_bound, report
        assert report.consumable, report  # and GPUs several claims share were among them


@pytest.mark.parametrize("path", KEPT, ids=[p.stem for p in KEPT])
def test_a_kept_case_agrees(app, admin_api, scheduler, path):
    """The kept cases (tests/agreement_cases/: disagreements found, and the rules most easily got
    wrong), replayed on fresh nodes: the model agrees, and the scheduler binds or refuses as
    recorded."""
    case = yaml.safe_load(path.read_text())
    admission_objects(admin_api)
    verdict = replay(admin_api, process_of(app).local.cluster.store, AdmissionReads(admin_api, 10.0), case)
    recorded = case["scheduler"]
    assert verdict.agrees, (verdict.predicted, verdict.actual)
    # bound as recorded, or refused as recorded (among several nodes that fit, scoring picks)
    assert (verdict.actual is None) == (recorded == "Unschedulable"), (verdict, recorded)


def test_an_overcommitted_cpu_keeps_out_only_pods_that_ask_for_cpu(app, core, scheduler, uid):
    """1.27+ (kubernetes#116408): the model and the scheduler agree that a node whose cpu is
    over-committed (a pod bound by name, past the scheduler) still takes a dongle-only pod."""
    from app.domain.fit import fits
    from tests.helpers import eventually
    from tests.kube_helpers import create_node, create_pod, kubelet_standin, own_resource

    r = own_resource(uid, "o")
    node = f"{uid}-n"
    create_node(core, node, {r: "2"})
    kubelet_standin(core, node)
    create_pod(core, f"{uid}-hog", node, {"cpu": "8"})  # allocatable cpu is 4: over-committed
    store = process_of(app).local.cluster.store
    eventually(lambda: store.objects.requested_on(node).get("cpu") == 8000)
    [facts] = [n for n in store.node_facts() if n.name == node]
    for name, requests, placed in (
        (f"{uid}-dongle", {r: "1"}, True),
        (f"{uid}-cpu", {r: "1", "cpu": "1"}, False),
    ):
        create_pod(core, name, None, requests)
        view = eventually(lambda name=name: store.objects.pod("default", name))
        assert fits(view.shape, facts) is placed

        def decided(name: str = name) -> str | None:
            pod = core.read_namespaced_pod(name, "default")
            if pod.spec.node_name:
                return "bound"
            unschedulable = any(c.reason == "Unschedulable" for c in pod.status.conditions or ())
            return "unschedulable" if unschedulable else None

        assert eventually(decided, timeout=30) == ("bound" if placed else "unschedulable")
