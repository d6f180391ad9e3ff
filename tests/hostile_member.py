"""A stand-in for a hostile member cluster's API server, on a local CA: it answers /version and
/readyz as kube-apiserver does, every list with a gzip bomb (a few hundred KiB that inflate to
``bomb_mib`` MiB, sent unasked) and every watch with 410 Gone (to force a relist). Used by
tests/integration/test_hostile_members.py and bench/intake.py's member-bomb shape."""

from __future__ import annotations

import base64
import contextlib
import datetime
import gzip
import io
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.2"}
GONE = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410}


def _certificates(folder: Path) -> tuple[bytes, Path, Path]:
    """A CA (its PEM) and a certificate for 127.0.0.1 it signed (files: certificate, key)."""
    now = datetime.datetime.now(datetime.UTC)

    def made(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer, ca: bool, ip: bool):
        built = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ip:
            names = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
            built = built.add_extension(names, critical=False)
        return built.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "stand-in CA")])
    ca = made("stand-in CA", ca_key, ca_name, ca_key, ca=True, ip=False)
    cert = made("stand-in member", key, ca.subject, ca_key, ca=False, ip=True)
    cert_file, key_file = folder / "member.crt", folder / "member.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return ca.public_bytes(serialization.Encoding.PEM), cert_file, key_file


def _bomb(mib: int) -> bytes:
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", compresslevel=9) as out:
        out.write(b'{"kind":"List","metadata":{"resourceVersion":"1"},"items":[')
        spaces = b" " * (1 << 20)
        for _ in range(mib):
            out.write(spaces)
    return packed.getvalue()


class Member:
    """The stand-in, serving until ``stop``; ``kubeconfig(name)`` reaches it with its CA."""

    def __init__(self, folder: Path, bomb_mib: int = 700) -> None:
        ca, cert, key = _certificates(folder)
        self.ca = base64.b64encode(ca).decode()
        bomb = _bomb(bomb_mib)
        self.lists = 0

        member = self

        class Answer(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _send(self, status: int, data: bytes, gzipped: bool = False) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if gzipped:
                    self.send_header("Content-Encoding", "gzip")  # unasked
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                if url.path == "/version":
                    self._send(200, json.dumps(VERSION).encode())
                elif url.path in ("/readyz", "/livez", "/healthz"):
                    self._send(200, b"ok")
                elif "watch" in query:
                    self._send(410, json.dumps(GONE).encode())
                elif url.path.startswith(("/api/v1/", "/apis/")) and url.path.count("/") >= 3:
                    member.lists += 1
                    self._send(200, bomb, gzipped=True)
                else:
                    self._send(404, b'{"kind":"Status","code":404}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(min(length, 1 << 20))
                self._send(404, b'{"kind":"Status","code":404}')

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        self.server.daemon_threads = True
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def kubeconfig(self, name: str) -> str:
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": name,
                        "cluster": {
                            "server": f"https://127.0.0.1:{self.port}",
                            "certificate-authority-data": self.ca,
                        },
                    }
                ],
                "users": [{"name": name, "user": {"token": "stand-in"}}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "current-context": name,
            }
        )

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def hostile(folder: Path, bomb_mib: int = 700) -> Iterator[Member]:
    member = Member(folder, bomb_mib)
    try:
        yield member
    finally:
        member.stop()
