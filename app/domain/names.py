"""Resource names, exactly as Kubernetes validates them.

``is_extended_resource_name`` follows ``IsExtendedResourceName`` in
``k8s.io/kubernetes/pkg/apis/core/helper``:

* a name without ``/`` is a native resource (``cpu``, ``memory``, ...);
* a name containing ``kubernetes.io/`` is a prefixed native resource
  (``kubernetes.io/...`` and every subdomain such as ``foo.kubernetes.io/...``);
* a name starting with ``requests.`` is refused (quota syntax);
* ``requests.<name>`` must be a qualified name: an optional DNS-1123
  subdomain prefix (at most 253 characters) and ``/``, then a name part of at
  most 63 characters of ``[A-Za-z0-9_.-]`` starting and ending alphanumeric.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from app.domain.numbers import bounded_int

REQUESTS_PREFIX = "requests."
NATIVE_PREFIX = "kubernetes.io/"

_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_MAX = 253
_QUALIFIED_NAME_MAX = 63
_DOMAIN_MAX = _DNS1123_SUBDOMAIN_MAX - len(REQUESTS_PREFIX)  # "requests.<domain>" is a subdomain

STANDARD_RESOURCES = frozenset({"cpu", "memory", "pods", "ephemeral-storage", "storage"})


def is_standard_resource(name: str) -> bool:
    """The resources the kubelet itself reports: cpu, memory, pods, hugepages-*, ..."""
    return name in STANDARD_RESOURCES or name.startswith(("hugepages-", "attachable-volumes-"))


# KEP-5004: a DeviceClass's implicit extended resource name; in the kubernetes.io domain, yet
# requested in a pod's resources like any extended resource and counted as one by the scheduler
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def is_requested_as_extended(name: str) -> bool:
    """Whether a pod's request of ``name`` is an extended resource here: not native, or a
    DeviceClass's implicit name."""
    return not is_native_resource(name) or name.startswith(DEVICE_CLASS_PREFIX)


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: cpu, memory, pods, hugepages-*, ``*kubernetes.io/*``."""
    return "/" not in name or NATIVE_PREFIX in name


def is_dns_subdomain(value: str) -> bool:
    """``IsDNS1123Subdomain`` (object names such as a pod's): at most 253 characters of lower-case
    letters, digits, '-' and '.'."""
    return (
        len(value) <= _DNS1123_SUBDOMAIN_MAX and value.isascii() and bool(_DNS1123_SUBDOMAIN.fullmatch(value))
    )


def is_dns_label(value: str) -> bool:
    """``IsDNS1123Label`` (a namespace's name): at most 63 characters, no '.'."""
    return len(value) <= 63 and "." not in value and is_dns_subdomain(value)


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def is_label_value(value: str) -> bool:
    """``IsValidLabelValue``: empty, or at most 63 characters of letters, digits, '-', '_' and
    '.', starting and ending with a letter or digit (ASCII only)."""
    return len(value) <= 63 and value.isascii() and _LABEL_VALUE.fullmatch(value) is not None


def go_int(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: an optional sign and ASCII digits, nothing else
    (no spaces, no underscores, unlike Python's ``int``), within int64; None otherwise."""
    return bounded_int(text)


def qualified_name_errors(value: str) -> list[str]:
    """Errors of ``IsQualifiedName`` (apimachinery/pkg/util/validation)."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("the prefix before '/' must not be empty")
        elif len(prefix) > _DNS1123_SUBDOMAIN_MAX:
            errors.append(f"the prefix must be at most {_DNS1123_SUBDOMAIN_MAX} characters")
        elif not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            errors.append(
                "the prefix must be a DNS subdomain: lower-case letters, digits, '-' and '.', "
                "starting and ending with a letter or digit"
            )
    else:
        return ["a qualified name has at most one '/'"]
    if not name:
        errors.append("the name after '/' must not be empty")
    elif len(name) > _QUALIFIED_NAME_MAX:
        errors.append(f"the name after '/' must be at most {_QUALIFIED_NAME_MAX} characters")
    elif not _QUALIFIED_NAME_PART.fullmatch(name):
        errors.append(
            "the name after '/' may contain only letters, digits, '-', '_' and '.', "
            "and must start and end with a letter or digit"
        )
    return errors


def extended_resource_name_errors(name: str) -> list[str]:
    """Why ``name`` is not an extended resource name; empty when it is one."""
    if not name:
        return ["is required"]
    if name.strip() != name:
        return ["must not contain spaces"]
    if "/" not in name:
        return [
            "must be a qualified name with a domain, like example.com/dongle "
            "(names without '/' are standard resources)"
        ]
    if NATIVE_PREFIX in name:
        return ["must not be in the kubernetes.io domain or its subdomains"]
    if name.startswith(REQUESTS_PREFIX):
        return ["must not start with 'requests.'"]
    domain = name.split("/", 1)[0]
    if not domain:
        return ["the domain before '/' must not be empty"]
    if len(domain) > _DOMAIN_MAX:
        return [f"the domain before '/' must be at most {_DOMAIN_MAX} characters"]
    return qualified_name_errors(REQUESTS_PREFIX + name)


def is_extended_resource_name(name: str) -> bool:
    return not extended_resource_name_errors(name)


def escape_json_pointer(token: str) -> str:
    """RFC 6901: ``~`` becomes ``~0`` and ``/`` becomes ``~1`` (in that order)."""
    return token.replace("~", "~0").replace("/", "~1")


def suggest(value: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """Known names a mistyped one may have meant: those containing it ("gpu"), then the closest
    by spelling ("nvidia.com/gpus")."""
    names = sorted(set(known))
    needle = value.strip().lower()[:253]
    if not needle:
        return []
    found = [n for n in names if needle in n.lower()]
    found += [n for n in difflib.get_close_matches(needle, names, n=limit, cutoff=0.6) if n not in found]
    return found[:limit]


TYPO_RATIO = 0.85  # "example.com/dongel" ~ "example.com/dongle" (0.94); "…/brand-new" is not (0.72)


def likely_typos(value: str, known: Iterable[str]) -> list[str]:
    """Known names so close to ``value`` that it is most likely a slip of the keyboard (closer than
    ``suggest``'s pick, which also offers names that merely share a domain)."""
    return difflib.get_close_matches(value[:253], sorted(set(known)), n=3, cutoff=TYPO_RATIO)


def unknown_resource(value: str, known: Iterable[str]) -> str:
    """What a filter says of a name nobody knows: "No such resource 'gpu'; did you mean …?"."""
    close = suggest(value, known)
    return f"No such resource {value[:80]!r}" + (f"; did you mean {', '.join(close)}?" if close else ".")


def resource_field(
    value: str, label: str = "Resource", then: str = "", known: Iterable[str] | None = None
) -> tuple[str, str]:
    """A filter's extended resource name (stripped), or "" with what is wrong with it (``then``:
    what the page does instead, e.g. "Showing every resource."). With ``known``, a name not
    among them is refused too, with the known names it may have meant."""
    value = value.strip()
    if not value:
        return "", ""
    after = f" {then}" if then else ""
    names = set(known) if known is not None else None
    if names is not None and value not in names:
        return "", unknown_resource(value, names) + after
    if problems := extended_resource_name_errors(value):
        return "", f"{label} {value[:80]!r} {problems[0]}.{after}"
    return value, ""
