"""Reading member Secrets (app.kube.api.member_secrets) over stand-in pages: the labelled list
asked a few at a time, its pages followed to their end or to ``most``, each Secret's name and
kubeconfig taken as given (a name cut where it can only be refused), nothing else."""

from __future__ import annotations

import base64

import orjson
import pytest

from app.domain import member_kubeconfig
from app.kube.api import member_secrets
from app.kube.api.errors import KubeError
from app.kube.api.member_secrets import MemberSecrets


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(called: str, **data: str) -> dict[str, object]:
    return {"metadata": {"name": called}, "data": {k: b64(v) for k, v in data.items()}}


@pytest.fixture
def pages(monkeypatch):
    asked: list[dict[str, object]] = []
    served: list[dict[str, object]] = []

    def get(api, path, query, timeout):
        asked.append({"path": path, **query})
        return served[len(asked) - 1]

    monkeypatch.setattr(member_secrets.raw, "get", get)
    monkeypatch.setattr(member_secrets.raw, "body", lambda resp, most: orjson.dumps(resp))
    return asked, served


def test_the_labelled_pages_are_followed_and_each_secret_named(pages):
    asked, served = pages
    served += [
        {"items": [secret("s1", name="east", kubeconfig="k1"), secret("west", kubeconfig="k2")],
         "metadata": {"continue": "c1"}},
        {"items": [secret("no-kubeconfig"), {"metadata": {"name": "bad"}, "data": {"kubeconfig": "%%%"}}],
         "metadata": {}},
    ]  # fmt: skip
    found = MemberSecrets(lambda: None, "extres-clusters", "extres.dev/secret-type=cluster", 50).read()
    assert found == [("east", b"k1"), ("west", b"k2"), ("no-kubeconfig", b""), ("bad", b"")]
    first = {
        "path": "/api/v1/namespaces/extres-clusters/secrets",
        "labelSelector": "extres.dev/secret-type=cluster",
        "limit": member_secrets.PAGE,
    }
    assert asked == [first, {**first, "continue": "c1"}]


def test_past_most_no_page_is_asked_and_a_long_name_is_cut_where_it_is_still_refused(pages):
    asked, served = pages
    served += [{"items": [secret("a", name="x" * 5000, kubeconfig="k")] * 3, "metadata": {"continue": "c"}}]
    found = MemberSecrets(lambda: None, "ns", "l=v", 2).read()
    assert len(asked) == 1 and len(found) == 2
    name, _ = found[0]
    assert len(name) == 64
    with pytest.raises(member_kubeconfig.Refused) as refused:
        member_kubeconfig.read(name, b"")
    assert refused.value.rule == "name"


def test_a_page_that_cannot_be_read_is_a_kube_error(monkeypatch):
    def refuse(*args, **kwargs):
        raise ValueError("answer over 7864320 bytes")

    monkeypatch.setattr(member_secrets.raw, "get", refuse)
    with pytest.raises(KubeError):
        MemberSecrets(lambda: None, "ns", "l=v", 2).read()
