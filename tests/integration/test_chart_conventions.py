"""The chart follows the conventions of the common dashboards' charts, point by point; ships the
alerts, the ServiceMonitor and the Grafana dashboard; refuses bad values with the key named."""

from __future__ import annotations

import json
import subprocess
import sys

import helm_python as helm
import kubernetes_validate
import pytest
import yaml
from kubernetes import client

from tests.chart_helpers import CHART, render
from tests.helpers import repo_root

CRDS = {"ServiceMonitor", "PrometheusRule"}  # Prometheus Operator kinds: no schema to validate
EVERYTHING = {
    "image": {"repository": "registry.example/extres", "tag": "1.2.3", "pullPolicy": "Always"},
    "imagePullSecrets": [{"name": "regcred"}],
    "fullnameOverride": "dash",
    "serviceAccount": {"create": True, "name": "dash-sa", "annotations": {"iam.example/role": "r"}},
    "podAnnotations": {"example.org/scrape": "yes"},
    "podLabels": {"team": "devices"},
    "podSecurityContext": {"runAsNonRoot": True, "runAsUser": 2000, "fsGroup": 2000},
    "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True},
    "nodeSelector": {"pool": "system"},
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}],
    "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}
    ],
    "priorityClassName": "cluster-tools",
    "extraEnv": [{"name": "HTTPS_PROXY", "valueFrom": {"secretKeyRef": {"name": "proxy", "key": "url"}}}],
    "envFrom": [{"configMapRef": {"name": "extres-settings"}}],
    "resources": {"requests": {"cpu": "50m", "memory": "200Mi"}, "limits": {"memory": "400Mi"}},
    "metrics": {
        "serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "kps"}},
        "prometheusRule": {"enabled": True, "labels": {"release": "kps"}},
        "grafanaDashboard": {"enabled": True, "namespace": "monitoring"},
    },
}


def by_kind(docs):
    out = {}
    for d in docs:
        out.setdefault(d["kind"], []).append(d)
    return out


def test_every_convention_lands_where_it_belongs():
    docs = render(EVERYTHING)
    report = helm.lint(CHART, EVERYTHING, strict=True)
    assert report["errors"] == [] and not [m for m in report["messages"] if m["severity"] >= 2]
    for doc in docs:
        if doc["kind"] not in CRDS:
            for version in ("1.28.0", "1.35.0", kubernetes_validate.latest_version()):
                if version == "1.28.0" and doc["kind"].startswith("ValidatingAdmissionPolicy"):
                    continue  # rendered for 1.30+ only (admissionpolicy.yaml), whoever the editors are
                kubernetes_validate.validate(doc, version, strict=True)
    kinds = by_kind(docs)
    [deploy] = kinds["Deployment"]
    assert deploy["metadata"]["name"] == "dash"
    tpl = deploy["spec"]["template"]
    pod = tpl["spec"]
    [c] = pod["containers"]
    assert c["image"] == "registry.example/extres:1.2.3" and c["imagePullPolicy"] == "Always"
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    assert pod["serviceAccountName"] == "dash-sa"
    assert kinds["ServiceAccount"][0]["metadata"]["annotations"] == {"iam.example/role": "r"}
    assert tpl["metadata"]["annotations"] == {"example.org/scrape": "yes"}
    assert tpl["metadata"]["labels"]["team"] == "devices"
    # Helm merges maps with the defaults: what is given is there, the rest stays locked down
    assert EVERYTHING["podSecurityContext"].items() <= pod["securityContext"].items()
    assert EVERYTHING["securityContext"].items() <= c["securityContext"].items()
    for key in ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "priorityClassName"):
        assert pod[key] == EVERYTHING[key], key
    assert EVERYTHING["extraEnv"][0] in c["env"]
    assert c["envFrom"] == EVERYTHING["envFrom"]
    assert c["resources"] == EVERYTHING["resources"]
    [monitor] = kinds["ServiceMonitor"]
    assert monitor["metadata"]["labels"]["release"] == "kps"
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "15s"}]
    [service] = kinds["Service"]
    assert monitor["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
    [dashboard] = [cm for cm in kinds["ConfigMap"] if not cm["metadata"]["name"].startswith("dash-history-")]
    assert dashboard["metadata"]["namespace"] == "monitoring"
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = (CHART / "files" / "extres-dashboard.json").read_text()
    assert json.loads(dashboard["data"]["extres.json"]) == json.loads(shipped)
    [rule] = kinds["PrometheusRule"]
    plain = yaml.safe_load((CHART / "files" / "extres-alerts.yaml").read_text())
    assert rule["spec"] == {"groups": plain["groups"]}  # the same rules promtool tests


def test_defaults_leave_the_optional_parts_out_and_tag_follows_the_app_version():
    docs = render()
    kinds = by_kind(docs)
    assert not CRDS & set(kinds)
    stores = [cm["metadata"]["name"] for cm in kinds["ConfigMap"]]  # the history's 32, empty, and no other
    assert stores == [f"extres-history-{i:02d}" for i in range(32)]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    [deploy] = kinds["Deployment"]
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":" + chart["appVersion"])
    assert chart["kubeVersion"]
    named = by_kind(render({"nameOverride": "devices"}))
    assert named["Deployment"][0]["metadata"]["name"] == "extres-devices"


def test_helm_test_hook_asks_readyz_and_may_reach_it():
    kinds = by_kind(render())
    hooks = [p for p in kinds["Pod"] if p["metadata"]["annotations"].get("helm.sh/hook") == "test"]
    [hook] = hooks
    [c] = hook["spec"]["containers"]
    [service] = kinds["Service"]
    port = service["spec"]["ports"][0]["port"]
    assert c["command"][-1] == f"http://{service['metadata']['name']}:{port}/readyz"
    # the Service does not pick the test pod, and the NetworkPolicy lets it in
    selector = service["spec"]["selector"].items()
    assert not selector <= hook["metadata"]["labels"].items()
    [policy] = kinds["NetworkPolicy"]
    peers = [p for rule in policy["spec"]["ingress"] for p in rule["from"]]
    assert any(
        p.get("podSelector", {}).get("matchLabels", {}).items() <= hook["metadata"]["labels"].items()
        for p in peers
        if "podSelector" in p
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"replicaCount": "two"}, "/replicaCount': got string, want integer"),
        ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
        ({"nodeSelector": {"pool": 3}}, "/nodeSelector/pool"),
        ({"tolerations": {"key": "x"}}, "/tolerations': got object, want array"),
        ({"metrics": {"serviceMonitor": {"enabled": "yes"}}}, "/metrics/serviceMonitor/enabled"),
        ({"metrics": {"serviceMonitor": {"interval": "often"}}}, "/metrics/serviceMonitor/interval"),
        ({"extraEnv": [{"value": "x"}]}, "/extraEnv/0"),
    ],
)
def test_values_of_the_wrong_type_are_refused_naming_the_key(values, message):
    with pytest.raises(helm.HelmError) as caught:
        helm.Chart.load(CHART).validate_schema(values)
    assert message in str(caught.value)


def test_a_missing_existing_secret_fails_the_install_with_a_message(control_plane, core, uid):
    """Rendered against the real API server (lookup answers): no crash-looping pod later."""
    config = helm.Config(kubeconfig_path=str(control_plane.kubeconfig), namespace="default")
    chart = helm.Chart.load(CHART)
    values = {"secretKey": {"existingSecret": f"key-{uid}"}}
    with pytest.raises(helm.HelmError, match=rf'no Secret "key-{uid}" in namespace "default"'):
        config.render(chart, values, name="extres", namespace="default", is_install=True)
    meta = client.V1ObjectMeta(name=f"key-{uid}")
    secret = client.V1Secret(metadata=meta, string_data={"secret-key": "x" * 48})
    core.create_namespaced_secret("default", secret)
    try:
        out = config.render(chart, values, name="extres", namespace="default", is_install=True)
        assert "kind: Deployment" in "".join(out.values())
    finally:
        core.delete_namespaced_secret(f"key-{uid}", "default")


def test_the_chart_readme_is_made_from_the_values():
    result = subprocess.run(
        [sys.executable, str(repo_root() / "scripts" / "chart_readme.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    text = (CHART / "README.md").read_text()
    for key in ("image.tag", "imagePullSecrets", "metrics.serviceMonitor.enabled", "tests.image"):
        assert f"| `{key}` |" in text
