"""Pod profiles for the benchmark and the tests: pods as the API server lists them.

``real``: pods made the way a Deployment's ReplicaSet, a StatefulSet or a Job
makes them (an owner object exists and the pod carries its ownerReference, the
pod-template-hash or controller-revision-hash labels, the kubectl
last-applied-configuration annotation of the owner's manifest), with an init
container and an app container with 20 env vars (fieldRef, secretKeyRef and
resourceFieldRef among them), envFrom, volumes (configMap, secret, emptyDir,
the projected service-account token; a StatefulSet's pods a persistentVolumeClaim
from its volumeClaimTemplates, a Job's a generic ephemeral volume) and mounts, liveness and readiness probes,
security contexts and tolerations; the kubelet's status (conditions, container
statuses, IPs) is written as a status patch, and the API server records
managedFields for it all. Listed, such a pod is 8-12 KB of JSON (``listed_size``
measures it; the bench prints it).

``tiny``: one container with a few requests (about 1.7 KB listed), the earlier
benchmark profile.

Pods are created already bound (``spec.nodeName``): no scheduler runs in the
benchmark, and the kubelet's part is played by the status patch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from kubernetes import client

OWNERS = ("ReplicaSet", "StatefulSet", "Job")
TIME = "2026-11-20T08:00:00Z"


def _env(app: str, n: int) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
        {
            "name": "DB_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": f"{app}-db", "key": "password"}},
        },
        {
            "name": "GOMAXPROCS",
            "valueFrom": {
                "resourceFieldRef": {"containerName": "app", "resource": "limits.cpu", "divisor": "1"}
            },
        },
    ]
    env += [{"name": f"SETTING_{i:02d}", "value": f"v{i}"} for i in range(n)]
    env += [
        {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel-collector.observability.svc:4317"},
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"},
    ]
    return env


def _probe(path: str, port: int, delay: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": 10,
        "timeoutSeconds": 2,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def _mounts(app: str) -> list[dict[str, Any]]:
    return [
        {"name": "config", "mountPath": f"/etc/{app}", "readOnly": True},
        {"name": "secrets", "mountPath": f"/var/run/secrets/{app}", "readOnly": True},
        {"name": "data", "mountPath": "/var/lib/data"},
        {
            "name": "kube-api-access",
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "readOnly": True,
        },
    ]


def _template(app: str, resource: str, amount: str) -> dict[str, Any]:
    """The pod template an owner (and each of its pods) carries."""
    security = {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    return {
        "serviceAccountName": app,
        "terminationGracePeriodSeconds": 30,
        "securityContext": {"runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001},
        "initContainers": [
            {
                "name": "init-config",
                "image": f"registry.example/{app}-init:1.4.2",
                "command": ["/bin/sh", "-c", f"render-config --in /templates --out /etc/{app} --strict"],
                "volumeMounts": _mounts(app)[:1],
                "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
            }
        ],
        "containers": [
            {
                "name": "app",
                "image": f"registry.example/{app}:2.31.7",
                "args": ["--config", f"/etc/{app}/config.yaml"],
                "ports": [
                    {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                ],
                "env": _env(app, 12),
                "envFrom": [{"configMapRef": {"name": f"{app}-env"}}],
                "resources": {
                    "requests": {"cpu": "500m", "memory": "512Mi", resource: amount},
                    "limits": {"memory": "1Gi", resource: amount},
                },
                "livenessProbe": _probe("/healthz", 8080, 15),
                "readinessProbe": _probe("/readyz", 8080, 5),
                "volumeMounts": _mounts(app),
                "securityContext": security,
                "imagePullPolicy": "IfNotPresent",
            },
        ],
        "volumes": [
            {"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
            {"name": "secrets", "secret": {"secretName": f"{app}-secrets", "defaultMode": 256}},
            {"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
            {
                "name": "kube-api-access",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "name": "kube-root-ca.crt",
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            }
                        },
                    ],
                },
            },
        ],
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
    }


# A generic ephemeral volume: a claim made per pod from this template.
EPHEMERAL = {
    "name": "scratch",
    "ephemeral": {
        "volumeClaimTemplate": {
            "metadata": {"labels": {"type": "scratch"}},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "fast-local",
                "resources": {"requests": {"storage": "10Gi"}},
            },
        }
    },
}


def _labels(app: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/instance": f"{app}-prod",
        "app.kubernetes.io/version": "2.31.7",
        "app.kubernetes.io/component": "worker",
        "team": "ml-infra",
    }


class RealProfile:
    """Owners (one per app) and their pods, created through the API server."""

    name = "real"

    def __init__(self, api: client.ApiClient, namespace: str = "default", apps: int = 30) -> None:
        self.core = client.CoreV1Api(api)
        self.apps_api = client.AppsV1Api(api)
        self.batch = client.BatchV1Api(api)
        self.namespace = namespace
        self.apps = apps
        self._owners: dict[int, dict[str, Any]] = {}

    def owner(self, a: int, resource: str) -> dict[str, Any]:
        """The owner of app ``a`` (created once): its ownerReference and labels for its pods."""
        if a in self._owners:
            return self._owners[a]
        kind = OWNERS[a % len(OWNERS)]
        app = f"app-{a:03d}"
        template = _template(app, resource, "1")
        pod_hash = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]
        labels = _labels(app)
        select = {"app.kubernetes.io/name": app}
        meta = {"name": app, "labels": labels}
        tmpl = {"metadata": {"labels": labels}, "spec": template}
        if kind == "ReplicaSet":
            meta["name"] = f"{app}-{pod_hash}"
            select = {**select, "pod-template-hash": pod_hash}
            tmpl["metadata"]["labels"] = {**labels, "pod-template-hash": pod_hash}
            body = {
                "metadata": meta,
                "spec": {"replicas": 0, "selector": {"matchLabels": select}, "template": tmpl},
            }
            self.size_owner(a, kind, body)
            made = self.apps_api.create_namespaced_replica_set(self.namespace, body)
            extra = {"pod-template-hash": pod_hash}
        elif kind == "StatefulSet":
            body = {
                "metadata": meta,
                "spec": {
                    "replicas": 0,
                    "serviceName": app,
                    "selector": {"matchLabels": select},
                    "template": tmpl,
                    "volumeClaimTemplates": [
                        {
                            "metadata": {"name": "data"},
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "20Gi"}},
                            },
                        }
                    ],
                },
            }
            self.size_owner(a, kind, body)
            made = self.apps_api.create_namespaced_stateful_set(self.namespace, body)
            extra = {"controller-revision-hash": f"{app}-{pod_hash[:9]}"}
        else:
            tmpl["spec"] = {**template, "restartPolicy": "Never"}
            tmpl["metadata"]["labels"] = {**labels, "job-name": app}
            body = {"metadata": meta, "spec": {"suspend": True, "template": tmpl, "backoffLimit": 2}}
            self.size_owner(a, kind, body)
            made = self.batch.create_namespaced_job(self.namespace, body)
            # what the API server puts in a Job's pod template (its generated selector among them)
            uid = made.metadata.uid
            extra = {
                "job-name": app,
                "controller-uid": uid,
                "batch.kubernetes.io/job-name": app,
                "batch.kubernetes.io/controller-uid": uid,
            }
        ref = {
            "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
            "kind": kind,
            "name": made.metadata.name,
            "uid": made.metadata.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
        # what `kubectl apply` recorded: the manifest as written, before defaults
        manifest = {
            "apiVersion": ref["apiVersion"],
            "kind": kind,
            "metadata": {"name": app, "namespace": self.namespace, "labels": labels},
            "spec": {
                "selector": {"matchLabels": select},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {k: c[k] for k in ("name", "image", "resources", "ports") if k in c}
                            for c in template["containers"]
                        ]
                    },
                },
            },
        }
        applied = json.dumps(manifest, separators=(",", ":"))
        self._owners[a] = {"ref": ref, "labels": {**labels, **extra}, "applied": applied, "kind": kind}
        return self._owners[a]

    def size_owner(self, a: int, kind: str, body: dict[str, Any]) -> None:
        """Change an owner's manifest before it is created (its replicas: none here)."""

    def body(self, j: int, node: str, resource: str, amount: str = "1") -> dict[str, Any]:
        a = j % self.apps
        app = f"app-{a:03d}"
        owner = self.owner(a, resource)
        spec = _template(app, resource, amount)
        if owner["kind"] == "Job":
            spec["restartPolicy"] = "Never"
        if owner["kind"] == "StatefulSet":
            spec["hostname"], spec["subdomain"] = f"{app}-{j}", app
            # the claim its volumeClaimTemplates made for this replica, in place of the emptyDir
            spec["volumes"] = [
                {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{app}-{j}"}}
                if v["name"] == "data"
                else v
                for v in spec["volumes"]
            ]
        elif owner["kind"] == "Job":
            spec["volumes"] = [*spec["volumes"], EPHEMERAL]
        spec["nodeName"] = node
        return {
            "metadata": {
                "name": f"{owner['ref']['name']}-{j:06d}",
                "generateName": f"{owner['ref']['name']}-",
                "labels": owner["labels"],
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": owner["applied"],
                },
                "ownerReferences": [owner["ref"]],
            },
            "spec": spec,
        }

    def status(self, j: int, node: str) -> dict[str, Any]:
        """What the kubelet writes once the pod runs."""
        ip = f"10.{(j >> 16) & 255}.{(j >> 8) & 255}.{j & 255}"
        running = {"running": {"startedAt": TIME}}

        def container(name: str, image: str, state: dict[str, Any], ready: bool) -> dict[str, Any]:
            return {
                "name": name,
                "image": image,
                "imageID": f"{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()}",
                "containerID": f"containerd://{hashlib.sha256(f'{name}{j}'.encode()).hexdigest()}",
                "ready": ready,
                "restartCount": 0,
                "started": ready,
                "state": state,
                "lastState": {},
            }

        app = f"app-{j % self.apps:03d}"
        return {
            "status": {
                "phase": "Running",
                "hostIP": f"192.168.{(hash(node) >> 8) & 255}.{hash(node) & 255}",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "startTime": TIME,
                "qosClass": "Burstable",
                "conditions": [
                    {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": TIME}
                    for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
                ],
                "containerStatuses": [
                    container("app", f"registry.example/{app}:2.31.7", running, True),
                ],
            }
        }

    def create(self, j: int, node: str, resource: str, amount: str = "1") -> None:
        body = self.body(j, node, resource, amount)
        self.core.create_namespaced_pod(self.namespace, body, _preload_content=False)
        self.core.patch_namespaced_pod_status(
            body["metadata"]["name"], self.namespace, self.status(j, node), _preload_content=False
        )


class TinyProfile:
    """One container and a few requests: the earlier benchmark profile."""

    name = "tiny"

    def __init__(self, api: client.ApiClient, namespace: str = "default") -> None:
        self.core = client.CoreV1Api(api)
        self.namespace = namespace

    def create(self, j: int, node: str, resource: str, amount: str = "1") -> None:
        self.core.create_namespaced_pod(
            self.namespace,
            {
                "metadata": {"name": f"p{j:06d}", "labels": {"app": f"a{j % 50}"}},
                "spec": {
                    "nodeName": node,
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.example/i:1",
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "64Mi", resource: amount},
                                "limits": {resource: amount},
                            },
                        }
                    ],
                },
            },
            _preload_content=False,
        )


PROFILES: dict[str, Callable[..., RealProfile | TinyProfile]] = {"real": RealProfile, "tiny": TinyProfile}


def listed_size(api: client.ApiClient, namespace: str = "default", limit: int = 100) -> float:
    """Mean bytes of JSON per pod in a list of ``namespace``, as the cache receives it."""
    core = client.CoreV1Api(api)
    resp: Any = core.list_namespaced_pod(namespace, limit=limit, _preload_content=False)
    body = json.loads(resp.data)
    items = body["items"]
    return len(resp.data) / max(1, len(items))
