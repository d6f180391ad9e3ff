"""Kueue (sigs.k8s.io/kueue) beside a test control plane: its manager built once from Go modules
by kube-testenv (``build-kueue``), run out of the cluster on loopback, stopped by its PID.

What a cluster install does with a Deployment, a Service and cert-manager or Kueue's own
certificate rotation, this does by hand, on loopback:

* Kueue's CRDs, five of them with their conversion webhook (v1beta1 <-> v1beta2), and its
  webhook configurations, each pointed at ``https://127.0.0.1:<port>/<path>`` (a URL, not a
  Service) with a CA made here;
* only the webhooks of what this manager serves: Kueue's own kinds, batch/v1 Jobs and Pods (the
  other integrations are off, so their webhooks would refuse every object of their kind);
* Kueue's visibility API (pending workloads and their positions, an aggregated API): its
  server bound to this machine's own address (an Endpoints address may not be loopback), a
  Service without selector and an EndpointSlice naming that address, and the APIServices
  Kueue's install has (kube-testenv's API server routes to endpoints and has a front proxy);
* the manager's configuration: no leader election, Kueue's own certificate rotation handed a CA
  and a serving certificate made here (for its Service name and for 127.0.0.1, in the Secret it
  reads), health and metrics on loopback ports.

While the manager is down its Job webhook refuses Job creation (failurePolicy: Fail): give it a
control plane of its own, or stop it last.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from extres_demo import testenv

CONVERTED = ("clusterqueues", "cohorts", "localqueues", "workloads", "multikueueclusters")
SERVED_WEBHOOKS = ("kueue-x-k8s-io", "batch-v1-job", "--v1-pod")  # in the webhooks' paths
LOOPBACK = ipaddress.ip_address("127.0.0.1")


def build() -> Path:
    """The folder of the manager (``kueue``), its CRDs (``crds/``) and webhooks (``webhooks.yaml``)."""
    out = testenv._script("build-kueue", capture_output=True, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


@dataclass
class Kueue:
    state_dir: Path
    webhook_port: int
    health_port: int
    metrics_port: int
    process: subprocess.Popen[bytes]
    visibility_port: int | None = None  # None: this machine has no address to serve it on

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)


SERVICE, SECRET, NAMESPACE = "kueue-webhook-service", "kueue-webhook-server-cert", "kueue-system"
VISIBILITY_SERVICE = "kueue-visibility-server"
VISIBILITY_VERSIONS = ("v1beta1", "v1beta2")
CA_NAME = "kueue-ca"  # the name Kueue's certificate rotation checks its CA for


def _pem_key(key: rsa.RSAPrivateKey) -> bytes:
    """PKCS #1, the one form Kueue's rotation reads a CA key in."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _certificates() -> dict[str, bytes]:
    """A CA and a serving certificate signed by it, for the Service name Kueue's rotation checks
    and for 127.0.0.1 where the webhooks are reached; ten years long, so the rotation (which renews
    what expires within 90 days) keeps them. As Kueue's Secret holds them: ca.crt, ca.key,
    tls.crt, tls.key."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME)])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(CA_NAME)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    names = [x509.DNSName(f"{SERVICE}.{NAMESPACE}.svc"), x509.IPAddress(LOOPBACK)]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{SERVICE}.{NAMESPACE}.svc")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return {
        "ca.crt": ca.public_bytes(serialization.Encoding.PEM),
        "ca.key": _pem_key(ca_key),
        "tls.crt": cert.public_bytes(serialization.Encoding.PEM),
        "tls.key": _pem_key(key),
    }


def _apply(api: Any, doc: dict[str, Any]) -> None:
    """Create ``doc``, or replace it when it is there already."""
    from kubernetes import dynamic

    client = dynamic.DynamicClient(api)
    resource = client.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    try:
        resource.create(body=doc)
    except Exception as exc:
        if getattr(exc, "status", None) != 409:
            raise
        namespace = doc["metadata"].get("namespace")
        current = resource.get(name=doc["metadata"]["name"], namespace=namespace)
        doc["metadata"]["resourceVersion"] = current.metadata.resourceVersion
        resource.replace(body=doc, namespace=namespace)


def host_address() -> str | None:
    """This machine's own IPv4 address (not loopback, not link-local), or None."""
    candidates: list[str] = []
    with contextlib.suppress(OSError):
        found = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        candidates += [str(info[4][0]) for info in found]
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:  # no packet is sent
            probe.connect(("192.0.2.254", 9))
            candidates.append(probe.getsockname()[0])
    except OSError:
        pass
    for text in candidates:
        address = ipaddress.ip_address(text)
        if not (address.is_loopback or address.is_link_local or address.is_unspecified):
            return text
    return None


def install_visibility(api: Any, address: str, port: int) -> None:
    """Route Kueue's visibility API through the API server to ``address``:``port``."""
    _apply(api, {"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": VISIBILITY_SERVICE, "namespace": NAMESPACE},
                 "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}})  # fmt: skip
    _apply(api, {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": VISIBILITY_SERVICE, "namespace": NAMESPACE,
                              "labels": {"kubernetes.io/service-name": VISIBILITY_SERVICE}},
                 "addressType": "IPv4", "endpoints": [{"addresses": [address]}],
                 "ports": [{"name": "https", "port": port, "protocol": "TCP"}]})  # fmt: skip
    for version in VISIBILITY_VERSIONS:
        _apply(api, {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                     "metadata": {"name": f"{version}.visibility.kueue.x-k8s.io"},
                     "spec": {"group": "visibility.kueue.x-k8s.io", "version": version,
                              "groupPriorityMinimum": 100, "versionPriority": 100,
                              "insecureSkipTLSVerify": True,  # as Kueue's own install: a self-signed server
                              "service": {"name": VISIBILITY_SERVICE, "namespace": NAMESPACE,
                                          "port": 443}}})  # fmt: skip


def install(api: Any, folder: Path, webhook_port: int, ca: bytes) -> None:
    """Kueue's CRDs and webhook configurations, pointed at a manager on ``webhook_port``."""
    bundle = base64.b64encode(ca).decode()
    for path in sorted((folder / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"]["names"]["plural"] in CONVERTED:
            crd["spec"]["conversion"] = {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {"url": f"https://127.0.0.1:{webhook_port}/convert", "caBundle": bundle},
                    "conversionReviewVersions": ["v1"],
                },
            }
        _apply(api, crd)
    for doc in yaml.safe_load_all((folder / "webhooks.yaml").read_text()):
        if not doc:
            continue
        doc["metadata"]["name"] = f"kueue-{doc['metadata']['name']}"
        kept = []
        for hook in doc.get("webhooks") or ():
            path = hook["clientConfig"]["service"]["path"]
            if any(part in path for part in SERVED_WEBHOOKS):
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{webhook_port}{path}", "caBundle": bundle}
                kept.append(hook)
        doc["webhooks"] = kept
        _apply(api, doc)


def start(plane: testenv.ControlPlane, state_dir: Path, api: Any, timeout: float = 120) -> Kueue:
    """Install Kueue on ``plane`` and start its manager; returns once it answers ready."""
    folder = build()
    state_dir.mkdir(parents=True, exist_ok=True)
    webhook_port, health_port, metrics_port = (testenv.free_port() for _ in range(3))
    made = _certificates()
    _apply(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET, "namespace": NAMESPACE},
        "data": {k: base64.b64encode(v).decode() for k, v in made.items()},
    }
    _apply(api, secret)
    certs = state_dir / "certs"  # what the kubelet would mount from the Secret
    certs.mkdir(parents=True, exist_ok=True)
    for name in ("tls.crt", "tls.key", "ca.crt"):
        (certs / name).write_bytes(made[name])
    install(api, folder, webhook_port, made["ca.crt"])
    address, visibility_port = host_address(), testenv.free_port()
    if address is not None:
        install_visibility(api, address, visibility_port)
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}"},
        "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(state_dir / "certs")},
        "leaderElection": {"leaderElect": False},
        # Kueue's own rotation, given the certificates made here (it keeps valid ones, writes them
        # to certDir and puts the CA in the webhooks and conversions); without it the manager reads
        # its metrics certificate from a fixed path under /etc
        "internalCertManagement": {
            "enable": True,
            "webhookServiceName": SERVICE,
            "webhookSecretName": SECRET,
        },
        # Jobs (suspended until admitted) and plain pods (gated until admitted) of the namespaces
        # whose pods name a LocalQueue (kueue.x-k8s.io/queue-name)
        "integrations": {"frameworks": ["batch/job", "pod"]},
        "visibilityServer": {"bindAddress": address or "127.0.0.1", "bindPort": visibility_port},
    }
    (state_dir / "config.yaml").write_text(yaml.safe_dump(config))
    with (state_dir / "kueue.log").open("ab") as log:
        process = subprocess.Popen(
            [
                str(folder / "kueue"),
                f"--config={state_dir / 'config.yaml'}",
                f"--kubeconfig={plane.kubeconfig}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "POD_NAMESPACE": NAMESPACE},
            cwd=state_dir,  # its visibility server's certificates go to state_dir/visibility (kube-testenv)
        )
    kueue = Kueue(
        state_dir, webhook_port, health_port, metrics_port, process, visibility_port if address else None
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"Kueue's manager exited ({process.returncode}); see {state_dir / 'kueue.log'}"
            )
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{health_port}/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return kueue
        except OSError:
            pass
        time.sleep(0.5)
    kueue.stop()
    raise RuntimeError(f"Kueue's manager was not ready within {timeout:g} s; see {state_dir / 'kueue.log'}")
