"""The Helm chart: rendered and linted with helm-python-sdk, validated with
kubernetes-validate, and its RBAC applied to the real kube-apiserver and
checked with SubjectAccessReview."""

from __future__ import annotations

import helm_python as helm
import kubernetes_validate
import pytest
from kubernetes import client

from tests.chart_helpers import CHART, IMPERSONATE, NAMESPACE, apply_rbac, render
from tests.helpers import eventually

VALUE_SETS = {
    "viewer-only": {"auth": {"mode": "service-account", "readOnly": True}},
    "editor": {
        "auth": {"mode": "service-account", "readOnly": False},
        "rbac": {"editorGroups": ["platform"]},
    },
    "impersonation": IMPERSONATE,
    "auth-proxy-sidecar": {
        **IMPERSONATE,
        "extraContainers": [
            {
                "name": "oauth2-proxy",
                "image": "quay.io/oauth2-proxy/oauth2-proxy:v7.6.0",
                "args": ["--config=/etc/oauth2-proxy/oauth2-proxy.cfg"],
                "volumeMounts": [{"name": "oauth2-proxy", "mountPath": "/etc/oauth2-proxy"}],
            }
        ],
        "extraVolumes": [{"name": "oauth2-proxy", "secret": {"secretName": "oauth2-proxy"}}],
        "proxy": {"port": 4180},
    },
    "token": {"auth": {"mode": "token"}, "rbac": {"viewerUsers": ["carol"]}},
    "ingress": {
        "ingress": {
            "enabled": True,
            "className": "nginx",
            "host": "extres.example.org",
            "tlsSecretName": "extres-tls",
            "annotations": {"nginx.ingress.kubernetes.io/auth-url": "https://auth.example.org/oauth2/auth"},
        }
    },
}
VALUE_SETS["gpu-usage"] = {
    "usage": {
        "prometheus": {
            "url": "http://prometheus-operated.monitoring:9090",
            "tokenFile": "/var/run/prom/token",
        },
        "windowMinutes": 30,
        "idleThresholdPercent": 2.5,
        "mappings": [{"pattern": "amd.com/gpu", "utilization": "gpu_gfx_activity", "node_label": "hostname"}],
    }
}
VALUE_SETS["fleet"] = {
    "clusters": {
        "name": "hub",
        "members": [
            {"name": "b", "secret": "extres-cluster-b"},
            {"name": "c", "secret": "kc-c", "key": "config"},
        ],
        "insecure": ["c"],
    }
}
VALUE_SETS["fleet-secrets"] = {"clusters": {"name": "hub", "secrets": {"namespace": "extres-clusters"}}}
SA = f"system:serviceaccount:{NAMESPACE}:extres"


def kinds(docs):
    return sorted(d["kind"] for d in docs)


@pytest.mark.compat
@pytest.mark.parametrize("name", sorted(VALUE_SETS))
def test_chart_renders_lints_and_validates(name):
    values = VALUE_SETS[name]
    report = helm.lint(CHART, values, strict=True)
    assert report["errors"] == []
    assert not [m for m in report["messages"] if m["severity"] >= 2], report["messages"]
    docs = render(values)
    for doc in docs:
        for version in ("1.28.0", "1.35.0", kubernetes_validate.latest_version()):
            if version == "1.28.0" and doc["kind"].startswith("ValidatingAdmissionPolicy"):
                continue  # rendered for 1.30+ only (admissionpolicy.yaml)
            kubernetes_validate.validate(doc, version, strict=True)
    assert "Deployment" in kinds(docs)
    assert ("Ingress" in kinds(docs)) is (name == "ingress")
    [pod] = [d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Deployment"]
    sidecars = [c["name"] for c in pod["containers"][1:]]
    assert sidecars == (["oauth2-proxy"] if name == "auth-proxy-sidecar" else [])
    assert ("oauth2-proxy" in [v["name"] for v in pod["volumes"]]) is (name == "auth-proxy-sidecar")
    text = repr(docs)
    assert "cluster-admin" not in text
    rules = [
        (d["metadata"].get("namespace"), r)
        for d in docs
        if d["kind"] in ("Role", "ClusterRole")
        for r in d.get("rules", [])
    ]
    on_secrets = [(ns, r) for ns, r in rules if {"secrets", "*"} & set(r.get("resources", []))]
    members = [("extres-clusters", {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]})]
    assert on_secrets == (members if name == "fleet-secrets" else [])


def test_member_secrets_values_reach_the_app_and_let_it_list_secrets_in_their_namespace_alone(admin_api):
    """clusters.secrets: the app is told the namespace and label; applied to the API server, the
    chart's Role lets the app's account list Secrets there and do nothing else with any Secret."""
    from app.settings.config import Settings

    docs = render(VALUE_SETS["fleet-secrets"])
    [deploy] = [d for d in docs if d["kind"] == "Deployment"]
    env = {
        e["name"]: e["value"]
        for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]
        if "value" in e
    }
    settings = Settings.from_env({k: v for k, v in env.items() if k.startswith("EXTRES_")})
    assert (settings.clusters_namespace, settings.clusters_selector, settings.clusters_dir) == (
        "extres-clusters",
        "extres.dev/secret-type=cluster",
        None,
    )
    apply_rbac(admin_api, docs)
    try:
        assert settles(
            lambda: review(admin_api, SERVICE_ACCOUNT, "list", "secrets", namespace="extres-clusters")
        )
        refused = [("get", "extres-clusters"), ("watch", "extres-clusters"), ("update", "extres-clusters"),
                   ("list", NAMESPACE), ("list", "kube-system"), ("list", "")]  # fmt: skip
        for verb, namespace in refused:
            assert not review(admin_api, SERVICE_ACCOUNT, verb, "secrets", namespace=namespace), verb
    finally:  # leave the roles as the other tests expect them
        rbac = client.RbacAuthorizationV1Api(admin_api)
        rbac.delete_namespaced_role_binding("extres-member-clusters", "extres-clusters")
        rbac.delete_namespaced_role("extres-member-clusters", "extres-clusters")
        apply_rbac(admin_api, render(IMPERSONATE))


def test_gpu_usage_values_reach_the_app_as_settings_it_accepts():
    """The chart's usage values become the app's settings, checked by the app's own parser; without
    a Prometheus URL none is set (no usage anywhere)."""
    from app.settings.config import Settings

    def env(values):
        [deploy] = [d for d in render(values) if d["kind"] == "Deployment"]
        return {
            e["name"]: e["value"]
            for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]
            if "value" in e
        }

    given = env(VALUE_SETS["gpu-usage"])
    settings = Settings.from_env({k: v for k, v in given.items() if k.startswith("EXTRES_")})
    assert settings.prometheus_url == "http://prometheus-operated.monitoring:9090"
    assert (
        settings.prometheus_token_file,
        settings.usage_window_minutes,
        settings.idle_threshold_percent,
    ) == (
        "/var/run/prom/token",
        30,
        2.5,
    )
    assert [(m.pattern, m.utilization, m.node_label) for m in settings.mappings] == [
        ("amd.com/gpu", "gpu_gfx_activity", "hostname")
    ]
    assert not [k for k in env({}) if "PROMETHEUS" in k or "USAGE" in k]


def test_gpu_hours_values_reach_the_app_as_settings_it_accepts():
    """The team label and the prices per GPU model become the app's settings, checked by its own
    parser; unset, none is given (no team, no cost column)."""
    from app.settings.config import Settings

    def env(values):
        [deploy] = [d for d in render(values) if d["kind"] == "Deployment"]
        container = deploy["spec"]["template"]["spec"]["containers"][0]
        return {
            e["name"]: e["value"]
            for e in container["env"]
            if "value" in e and e["name"].startswith("EXTRES_")
        }

    given = env(
        {
            "gpuHours": {
                "teamLabel": "example.com/team",
                "prices": {"NVIDIA-A100-SXM4-80GB": 2.5, "*": 1},
                "currency": "EUR",
            }
        }
    )
    settings = Settings.from_env(given)
    assert (settings.team_label, settings.prices, settings.gpu_price_currency) == (
        "example.com/team",
        {"NVIDIA-A100-SXM4-80GB": 2.5, "*": 1.0},
        "EUR",
    )
    assert not [k for k in env({}) if k in ("EXTRES_TEAM_LABEL", "EXTRES_GPU_PRICES")]


def test_member_clusters_are_mounted_by_name_and_the_app_may_read_no_secret():
    """Each member's kubeconfig is a file named by its cluster, mounted read-only from its Secret by
    the kubelet; the settings the app gets are the ones it accepts; no Role grants any right on
    Secrets (the app reads none through the API)."""
    from app.settings.config import Settings

    docs = render(VALUE_SETS["fleet"])
    [deploy] = [d for d in docs if d["kind"] == "Deployment"]
    pod = deploy["spec"]["template"]["spec"]
    [c] = pod["containers"]
    env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    settings = Settings.from_env({k: v for k, v in env.items() if k.startswith("EXTRES_")})
    assert (settings.cluster_name, settings.clusters_dir, settings.clusters_insecure) == (
        "hub",
        "/etc/extres/clusters",
        ("c",),
    )
    [volume] = [v for v in pod["volumes"] if v["name"] == "member-clusters"]
    sources = [s["secret"] for s in volume["projected"]["sources"]]
    assert sources == [
        {"name": "extres-cluster-b", "items": [{"key": "kubeconfig", "path": "b"}]},
        {"name": "kc-c", "items": [{"key": "config", "path": "c"}]},
    ]
    assert {"name": "member-clusters", "mountPath": "/etc/extres/clusters", "readOnly": True} in c[
        "volumeMounts"
    ]
    rules = [r for d in docs if d["kind"] in ("Role", "ClusterRole") for r in d.get("rules", [])]
    assert not [r for r in rules if "secrets" in r.get("resources", []) or "*" in r.get("resources", [])]
    one = next(d for d in render() if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert "member-clusters" not in {v["name"] for v in one["volumes"]}  # one cluster: nothing mounted


def test_deployment_is_locked_down():
    [deploy] = [d for d in render() if d["kind"] == "Deployment"]
    pod = deploy["spec"]["template"]["spec"]
    [c] = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    start = c["startupProbe"]  # the worker answers /healthz in ~0.5 s here: 40 times that
    assert start["httpGet"]["path"] == "/healthz" and start["periodSeconds"] * start["failureThreshold"] == 20
    assert c["resources"]["limits"]["memory"]


def test_ingress_values():
    [ing] = [d for d in render(VALUE_SETS["ingress"]) if d["kind"] == "Ingress"]
    assert ing["spec"]["ingressClassName"] == "nginx"
    assert ing["spec"]["tls"] == [{"hosts": ["extres.example.org"], "secretName": "extres-tls"}]
    assert "nginx.ingress.kubernetes.io/auth-url" in ing["metadata"]["annotations"]


def test_impersonation_rights_only_in_impersonate_mode():
    for name, values in VALUE_SETS.items():
        roles = [d for d in render(values) if d["kind"] == "ClusterRole"]
        impersonating = [r for r in roles if any("impersonate" in rule["verbs"] for rule in r["rules"])]
        assert bool(impersonating) is (name in ("impersonation", "auth-proxy-sidecar")), name


def test_schema_rejects_bad_values():
    chart = helm.Chart.load(CHART)
    for bad in (
        {"auth": {"mode": "root"}},
        {"rbac": {"editorGroups": ["system:masters"]}},
        {"rbac": {"viewerGroups": ["system:authenticated"]}},
        {"rbac": {"editorUsers": ["system:kube-controller-manager"]}},
        {"auth": {"impersonate": {"users": ["system:admin"]}}},
        {"auth": {"readOnly": "no"}},
        {"replicaCount": 0},
        {"usage": {"prometheus": {"url": "ftp://prometheus"}}},
        {"usage": {"idleThresholdPercent": 150}},
        {"usage": {"mappings": [{"pattern": "nvidia.com/*"}]}},
    ):
        with pytest.raises(helm.HelmError):
            chart.validate_schema(bad)


def review(api, subject, verb, resource, subresource="", name="", group="", namespace=""):
    user, groups = subject
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "groups": groups,
            "resourceAttributes": {
                "verb": verb,
                "group": group,
                "resource": resource,
                "subresource": subresource,
                "name": name,
                "namespace": namespace,
            },
        },
    }
    return client.AuthorizationV1Api(api).create_subject_access_review(body).status.allowed


VIEWER = ("alice", ["extres-viewers"])
EDITOR = ("bob", ["extres-editors"])
SERVICE_ACCOUNT = (SA, ["system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}"])
EXPECTED = [
    # subject, verb, resource, subresource, name, allowed
    (VIEWER, "list", "nodes", "", "", True),
    (VIEWER, "watch", "pods", "", "", True),
    (VIEWER, "list", "resourcequotas", "", "", True),
    (VIEWER, "get", "events", "", "", False),  # one event by name: never needed
    (VIEWER, "list", "events", "", "", False),  # the app reads a pod's Events, after the user's get pods
    (VIEWER, "watch", "events", "", "", False),
    (VIEWER, "patch", "nodes", "status", "", False),
    (VIEWER, "create", "events", "", "", False),
    (VIEWER, "get", "secrets", "", "", False),
    (EDITOR, "patch", "nodes", "status", "", True),
    (EDITOR, "create", "events", "", "", False),  # not cluster-wide ...
    (EDITOR, "list", "nodes", "", "", True),
    (EDITOR, "list", "events", "", "", False),
    (EDITOR, "patch", "nodes", "", "", False),
    (EDITOR, "update", "nodes", "status", "", False),
    (EDITOR, "delete", "nodes", "", "", False),
    (EDITOR, "delete", "pods", "", "", False),
    (EDITOR, "get", "secrets", "", "", False),
    (SERVICE_ACCOUNT, "list", "nodes", "", "", True),
    (SERVICE_ACCOUNT, "watch", "pods", "", "", True),
    (SERVICE_ACCOUNT, "patch", "nodes", "status", "", False),
    (SERVICE_ACCOUNT, "impersonate", "users", "", "anyone", False),  # only the users named
    (SERVICE_ACCOUNT, "impersonate", "users", "", "alice", True),
    (SERVICE_ACCOUNT, "impersonate", "users", "", "admin", False),
    (SERVICE_ACCOUNT, "impersonate", "groups", "", "extres-editors", True),
    (SERVICE_ACCOUNT, "impersonate", "groups", "", "system:masters", False),
    (SERVICE_ACCOUNT, "impersonate", "serviceaccounts", "", "", False),
    (SERVICE_ACCOUNT, "get", "secrets", "", "", False),
    (SERVICE_ACCOUNT, "list", "events", "", "", True),  # a pod's panel: the Events about it
    (SERVICE_ACCOUNT, "watch", "events", "", "", False),
    (SERVICE_ACCOUNT, "list", "configmaps", "", "", False),  # the history: its namespace only
    (SERVICE_ACCOUNT, "list", "limitranges", "", "", True),  # admission of a pasted pod
    (SERVICE_ACCOUNT, "get", "limitranges", "", "", False),
    (SERVICE_ACCOUNT, "update", "limitranges", "", "", False),
]


@pytest.mark.parametrize(
    ("subject", "namespace", "allowed"),
    [(EDITOR, "default", True), (EDITOR, "kube-system", False), (VIEWER, "default", False)],
)
def test_events_are_created_in_one_namespace_only(admin_api, subject, namespace, allowed):
    apply_rbac(admin_api, render(IMPERSONATE))
    assert settles(lambda: review(admin_api, subject, "create", "events", namespace=namespace) is allowed)


@pytest.mark.parametrize(
    ("subject", "verb", "name", "namespace", "allowed"),
    [
        (SERVICE_ACCOUNT, "get", "extres-history-00", NAMESPACE, True),
        (SERVICE_ACCOUNT, "update", "extres-history-31", NAMESPACE, True),
        (SERVICE_ACCOUNT, "get", "extres-history-00", "kube-system", False),
        (SERVICE_ACCOUNT, "get", "another-apps-config", NAMESPACE, False),
        (SERVICE_ACCOUNT, "list", "", NAMESPACE, False),  # named, never listed
        (SERVICE_ACCOUNT, "create", "", NAMESPACE, False),  # the chart makes the 32 stores
        (SERVICE_ACCOUNT, "delete", "extres-history-00", NAMESPACE, False),  # reused, never deleted
        (VIEWER, "get", "extres-history-00", NAMESPACE, False),
    ],
)
def test_the_capacity_history_is_its_32_named_configmaps_only(
    admin_api, subject, verb, name, namespace, allowed
):
    apply_rbac(admin_api, render(IMPERSONATE))
    assert settles(
        lambda: review(admin_api, subject, verb, "configmaps", name=name, namespace=namespace) is allowed
    )


@pytest.mark.parametrize(("subject", "verb", "resource", "sub", "name", "allowed"), EXPECTED)
def test_rendered_rbac_grants_exactly_what_it_should(admin_api, subject, verb, resource, sub, name, allowed):
    apply_rbac(admin_api, render(IMPERSONATE))
    assert settles(lambda: review(admin_api, subject, verb, resource, sub, name) is allowed)


def test_the_app_may_list_runtime_classes_and_nothing_more_of_them(admin_api):
    apply_rbac(admin_api, render(IMPERSONATE))
    group = "node.k8s.io"
    assert settles(lambda: review(admin_api, SERVICE_ACCOUNT, "list", "runtimeclasses", group=group))
    assert not review(admin_api, SERVICE_ACCOUNT, "create", "runtimeclasses", group=group)


def settles(check) -> bool:
    """The authorizer reads RBAC through a cache: a grant just changed holds within seconds."""
    return bool(eventually(check, timeout=10))


def test_service_account_may_write_only_in_service_account_mode(admin_api):
    apply_rbac(admin_api, render(VALUE_SETS["editor"]))
    assert settles(lambda: review(admin_api, SERVICE_ACCOUNT, "patch", "nodes", "status"))
    apply_rbac(admin_api, render(VALUE_SETS["viewer-only"]))
    assert settles(lambda: not review(admin_api, SERVICE_ACCOUNT, "patch", "nodes", "status"))
    apply_rbac(admin_api, render(IMPERSONATE))  # leave the roles as the security tests expect them


def render_text(values=None):
    chart = helm.Chart.load(CHART)
    return chart.render(values or {}, name="extres", namespace=NAMESPACE, is_install=True)


def env_of(docs: list) -> dict:
    [deploy] = [d for d in docs if d["kind"] == "Deployment"]
    return {e["name"]: e.get("value") for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]}


def test_default_install_is_read_only_and_warns_when_it_is_not():
    docs = render()
    assert env_of(docs)["EXTRES_READ_ONLY"] == "true"
    [app_binding] = [
        d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == "extres-app"
    ]
    assert app_binding["roleRef"]["name"] == "extres-viewer"
    notes = next(t for p, t in render_text().items() if p.endswith("NOTES.txt"))
    assert "WARNING" not in notes
    notes = next(t for p, t in render_text({"auth": {"readOnly": False}}).items() if p.endswith("NOTES.txt"))
    assert "WARNING: auth.readOnly is false in service-account mode" in notes
    # behind the Ingress, the NetworkPolicy admitting only its controller: each user's address is
    # read from the entry the controller adds, so no warning
    behind: dict = {"auth": {"mode": "token"}, "ingress": {"enabled": True}}
    assert env_of(render(behind))["EXTRES_FORWARDERS"] == "0.0.0.0/0,::/0"
    assert "WARNING" not in next(t for p, t in render_text(behind).items() if p.endswith("NOTES.txt"))
    behind["networkPolicy"] = {"enabled": False}  # anyone may reach the pods: no entry is believed
    assert "EXTRES_FORWARDERS" not in env_of(render(behind))
    notes = next(t for p, t in render_text(behind).items() if p.endswith("NOTES.txt"))
    assert "WARNING: token mode behind the Ingress, but the dashboard cannot tell its users apart" in notes
    behind["auth"]["trustedProxies"] = ["10.0.0.12/32"]
    notes = next(t for p, t in render_text(behind).items() if p.endswith("NOTES.txt"))
    assert "WARNING" not in notes
    assert "EXTRES_FORWARDERS" not in env_of(render())  # no Ingress: no forwarder either


def test_impersonation_needs_named_users():
    with pytest.raises(helm.HelmError, match=r"auth\.impersonate\.users"):
        render({"auth": {"mode": "impersonate"}})


def test_token_mode_keeps_sign_outs_in_a_configmap_the_app_may_update(admin_api):
    docs = render(VALUE_SETS["token"])
    env = env_of(docs)
    assert env["EXTRES_SESSION_STORE"] == f"{NAMESPACE}/extres-sessions"
    [store] = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "extres-sessions"]
    assert "data" not in store  # an upgrade keeps the sign-outs the app wrote
    apply_rbac(admin_api, docs)

    def may(verb: str, name: str) -> bool:
        return review(admin_api, SERVICE_ACCOUNT, verb, "configmaps", name=name, namespace=NAMESPACE)

    assert settles(lambda: may("update", "extres-sessions"))
    assert may("get", "extres-sessions")
    # the capacity history's Role names its 32 ConfigMaps (the chart makes them), no other
    assert may("update", "extres-history-00") and may("get", "extres-history-31")
    assert not may("get", "extres-history-32") and not may("get", "other-app-config")
    assert not may("create", "") and not may("delete", "extres-history-00") and not may("list", "")
    assert not review(admin_api, SERVICE_ACCOUNT, "update", "configmaps", name="extres-sessions")
    assert not review(admin_api, SERVICE_ACCOUNT, "get", "configmaps", name="x", namespace="kube-system")
    stores = [
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("extres-history-")
    ]
    assert len(stores) == 32 and not any("data" in d for d in stores)  # an upgrade keeps the history
    assert "EXTRES_SESSION_STORE" not in str(render(IMPERSONATE))


def test_pdb_only_with_more_than_one_replica():
    assert "PodDisruptionBudget" not in kinds(render())
    assert "PodDisruptionBudget" in kinds(render({"replicaCount": 2}))


def test_metrics_port_is_in_the_service_not_the_ingress():
    docs = render(VALUE_SETS["ingress"])
    [svc] = [d for d in docs if d["kind"] == "Service"]
    assert {p["name"] for p in svc["spec"]["ports"]} == {"http", "metrics"}
    [ing] = [d for d in docs if d["kind"] == "Ingress"]
    backends = [p["backend"]["service"]["port"] for r in ing["spec"]["rules"] for p in r["http"]["paths"]]
    assert backends == [{"name": "http"}]
    [policy] = [d for d in docs if d["kind"] == "NetworkPolicy"]
    assert [[p["port"] for p in rule["ports"]] for rule in policy["spec"]["ingress"]] == [
        ["http"],
        ["metrics"],
    ]


def test_replicas_share_a_kept_secret_key():
    docs = render({"replicaCount": 2})
    [secret] = [d for d in docs if d["kind"] == "Secret"]
    assert len(secret["data"]["secret-key"]) >= 48
    [deploy] = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["EXTRES_REPLICAS"]["value"] == "2"
    assert env["EXTRES_SECRET_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": secret["metadata"]["name"],
        "key": "secret-key",
    }
    own = render({"secretKey": {"existingSecret": "mine"}})
    assert "Secret" not in kinds(own)
    [deploy] = [d for d in own if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["EXTRES_SECRET_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "mine"
    # an operator's Secret may lack the history key: then no history is written (said on the page)
    assert env["EXTRES_HISTORY_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "mine",
        "key": "history-key",
        "optional": True,
    }


def test_the_history_has_its_own_kept_key_apart_from_the_session_key():
    docs = render({})
    [secret] = [d for d in docs if d["kind"] == "Secret"]
    assert (
        len(secret["data"]["history-key"]) >= 48
        and secret["data"]["history-key"] != secret["data"]["secret-key"]
    )
    [deploy] = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["EXTRES_HISTORY_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": secret["metadata"]["name"],
        "key": "history-key",
        "optional": False,
    }


def test_trusted_proxies_wider_than_a_24_are_refused():
    import helm_python as helm

    with pytest.raises(helm.HelmRenderError, match="wider than /24"):
        render({"auth": {"trustedProxies": ["10.0.0.0/8"]}})
    with pytest.raises(helm.HelmRenderError, match="wider than /120"):
        render({"auth": {"trustedProxies": ["fd00::/64"]}})
    assert render({"auth": {"trustedProxies": ["10.0.0.0/24", "10.9.9.9"]}})


def test_an_auth_proxy_sidecar_is_the_only_way_in_and_gets_no_token():
    """proxy.port: the Service's http port and the NetworkPolicy lead to the sidecar, never past
    it to the dashboard; the service account's token is mounted into the dashboard alone."""
    sidecar = {"name": "oauth2-proxy", "image": "oauth2-proxy:v7", "ports": [{"containerPort": 4180}]}
    docs = render(
        {**IMPERSONATE, "proxy": {"port": 4180}, "extraContainers": [sidecar], **VALUE_SETS["ingress"]}
    )
    [svc] = [d for d in docs if d["kind"] == "Service"]
    assert {p["name"]: p["targetPort"] for p in svc["spec"]["ports"]} == {"http": 4180, "metrics": "metrics"}
    [policy] = [d for d in docs if d["kind"] == "NetworkPolicy"]
    assert [[p["port"] for p in rule["ports"]] for rule in policy["spec"]["ingress"]] == [[4180], ["metrics"]]
    [deploy] = [d for d in docs if d["kind"] == "Deployment"]
    pod = deploy["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    mounts = {c["name"]: [m["mountPath"] for m in c.get("volumeMounts", [])] for c in pod["containers"]}
    token = "/var/run/secrets/kubernetes.io/serviceaccount"
    assert token in mounts["extres"] and token not in mounts["oauth2-proxy"]
    [sa] = [d for d in docs if d["kind"] == "ServiceAccount"]
    assert sa["automountServiceAccountToken"] is False
    # the sidecar runs as locked down as the dashboard; what it sets itself wins
    contexts = {c["name"]: c.get("securityContext") for c in pod["containers"]}
    assert contexts["oauth2-proxy"] == contexts["extres"] and contexts["extres"]["readOnlyRootFilesystem"]
    own = {**sidecar, "securityContext": {"runAsUser": 2000, "readOnlyRootFilesystem": True}}
    [deploy] = [
        d
        for d in render({**IMPERSONATE, "proxy": {"port": 4180}, "extraContainers": [own]})
        if d["kind"] == "Deployment"
    ]
    [theirs] = [c for c in deploy["spec"]["template"]["spec"]["containers"] if c["name"] == "oauth2-proxy"]
    assert theirs["securityContext"] == {**contexts["extres"], **own["securityContext"]}  # theirs win
    [test_pod] = [d for d in docs if d["kind"] == "Pod"]
    assert test_pod["spec"]["automountServiceAccountToken"] is False


@pytest.mark.parametrize("port", [8080, 9102, 70000])
def test_a_proxy_port_that_is_the_dashboards_own_is_refused(port):
    with pytest.raises(Exception, match="proxy"):
        render({"proxy": {"port": port}})


def test_the_charts_device_plugin_patterns_are_the_apps_and_reach_it():
    from app.domain.device_plugins import DEFAULT_DEVICE_PLUGIN_PATTERNS

    env = env_of(render())
    assert tuple(env["EXTRES_DEVICE_PLUGIN_RESOURCES"].split(",")) == DEFAULT_DEVICE_PLUGIN_PATTERNS


def test_the_roles_read_kueues_objects_unless_told_not_to():
    def kueue_rules(values: dict) -> list[dict]:
        [viewer] = [
            d
            for d in render(values)
            if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "extres-viewer"
        ]
        return [r for r in viewer["rules"] if any("kueue.x-k8s.io" in g for g in r["apiGroups"])]

    rules = kueue_rules({})
    assert {v for r in rules for v in r["verbs"]} == {"get", "list", "watch"}  # never a write
    assert "workloads" in rules[0]["resources"] and "clusterqueues" in rules[0]["resources"]
    assert kueue_rules({"kueue": {"read": False}}) == []
