"""Where the lab may call out on a tenant's behalf (alert webhooks, registered agents): public
http(s) addresses only, unless the operator says otherwise.

A webhook's or an agent's URL is the tenant's to choose, so it must not reach the lab's own
network: loopback, private, link-local (cloud metadata included), CGNAT, multicast,
unspecified and other non-global addresses are refused, as are ports no browser would POST
to. The check runs on every address the host resolves to, at the form and again at send time
(DNS can change), and the send connects to an address that was checked.
`LAB_OUTBOUND_ALLOWED_HOSTS` (formerly `LAB_ALERT_ALLOWED_HOSTS`, still read) names the
exceptions, and every refusal it could lift says so.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

SCHEMES = {"http": 80, "https": 443}
# The operator's setting that lets internal targets through (lab/settings.py reads it).
OUTBOUND_SETTING = "LAB_OUTBOUND_ALLOWED_HOSTS"
# The Fetch standard's "bad ports": services that are not HTTP (ssh 22, smtp 25, dns 53, …).
BAD_PORTS = frozenset(
    {1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101}
    | {102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179}
    | {389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587}
    | {601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 5060, 5061, 6000}
    | {6566, 6665, 6666, 6667, 6668, 6669, 6697, 10080}
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]


class TargetRefused(ValueError):
    """An alert URL the lab will not send to, with the reason in words."""


@dataclass(frozen=True)
class HostRule:
    """One LAB_OUTBOUND_ALLOWED_HOSTS entry: a host, on one port or (port None) on any."""

    host: str
    port: int | None = None

    def admits(self, host: str, port: int) -> bool:
        return self.host == host and self.port in (None, port)


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (the checked addresses) and what to call the host."""

    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]


def parse_allowed_hosts(raw: str) -> frozenset[HostRule]:
    """`host`, `host:port` or `[v6]:port`, comma or space separated; raises ValueError on junk."""
    rules = set()
    for item in raw.replace(",", " ").split():
        parts = urlsplit(f"http://{item}")
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"{item!r} has an invalid port") from None
        host = parts.hostname
        if not host or parts.path or parts.query or parts.username or "@" in item:
            raise ValueError(f"{item!r} is not a host or host:port")
        rules.add(HostRule(host=host.lower(), port=port))
    return frozenset(rules)


def address_refusal(address: IPAddress) -> str | None:
    """Why an address is not one alerts may reach, or None for a public unicast address."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return address_refusal(embedded)
    for kind, flag in (
        ("loopback", address.is_loopback),
        ("unspecified", address.is_unspecified),
        ("link-local (cloud metadata lives there)", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
    ):
        if flag:
            return f"{address} is a {kind} address"
    if not address.is_global:
        return f"{address} is not a public address (shared, reserved or documentation range)"
    return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64), which is what it reaches."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _parts(url: str) -> tuple[SplitResult, str, int]:
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise TargetRefused("give an http:// or https:// URL")
    if not parts.hostname:
        raise TargetRefused("give an http:// or https:// URL with a host")
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise TargetRefused("the URL has spaces or control characters")
    try:
        port = parts.port or SCHEMES[parts.scheme]
    except ValueError:
        raise TargetRefused("the URL's port is not a number from 1 to 65535") from None
    return parts, parts.hostname.lower().rstrip("."), port


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the host resolves to (raises OSError when it does not resolve)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def check_target(
    url: str,
    *,
    allowed: frozenset[HostRule] = frozenset(),
    own: tuple[str, int] | None = None,
    resolve: Resolver = system_resolver,
    unresolved_ok: bool = False,
) -> Target:
    """The URL, checked against every address its host resolves to; raises TargetRefused.

    own is the lab's own host and port, never a target. unresolved_ok lets a form accept a name
    that does not resolve yet (the send checks it again); a send refuses it.
    """
    parts, host, port = _parts(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    exempt = any(rule.admits(host, port) for rule in allowed)
    if not exempt:
        if own is not None and (host, port) == own:
            raise _refused(f"{host}:{port} is this lab itself", host, port)
        if port in BAD_PORTS:
            raise _refused(f"port {port} is not a web port", host, port)
        if host == "localhost" or host.endswith(".localhost"):
            raise _refused(f"{host} is this machine", host, port)
    try:
        addresses = tuple(resolve(host, port))
    except (OSError, UnicodeError) as error:
        if unresolved_ok:
            return Target(parts.scheme, host, port, path, ())
        raise TargetRefused(f"{host} does not resolve ({error})") from None
    if not addresses:
        raise TargetRefused(f"{host} resolves to no address")
    if not exempt:
        for text in addresses:
            reason = address_refusal(ipaddress.ip_address(text.split("%")[0]))
            if reason is not None:
                named = "" if text == host.strip("[]") else f"{host} resolves to "
                raise _refused(f"{named}{reason}", host, port)
    return Target(parts.scheme, host, port, path, addresses)


def _refused(reason: str, host: str, port: int) -> TargetRefused:
    """A refusal an operator may lift, saying how."""
    bare = host.strip("[]")
    rule = f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"
    return TargetRefused(
        f"{reason} (the lab's operator may allow it: {OUTBOUND_SETTING}={rule}, then restart)"
    )


def origin_of(url: str) -> tuple[str, int] | None:
    """The host and port of an http(s) URL (the lab's LAB_PUBLIC_URL), None if it has none."""
    try:
        _, host, port = _parts(url)
    except TargetRefused:
        return None
    return host, port
