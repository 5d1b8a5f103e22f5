"""The address of the client behind a request: the one function everything that limits or allows
by address asks (sign-in limits, API throttles, the /metrics allowlist).

``X-Forwarded-For`` and ``X-Real-IP`` are set by whoever sends the request, so they are believed
only when the direct peer (``REMOTE_ADDR``) is one of ``GANGSCHED_TRUSTED_PROXIES`` (addresses or
networks; default none: every header is ignored and the peer is the client). Then the chain is
read from the right, as each proxy appends the address it received the request from: trusted
proxies are skipped, and the first address that is not a trusted proxy is the client. Whatever a
client wrote to the left of that is ignored, so rotating the header gains nothing. Without
``X-Forwarded-For``, a trusted peer's ``X-Real-IP`` (nginx's single address) is the client.
"""

from __future__ import annotations

import functools
import ipaddress

from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_HOPS = 32  # a longer chain is read only this far from the right


@functools.lru_cache(maxsize=8)
def _networks(trusted: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in trusted)


def trusted_proxies() -> tuple[Network, ...]:
    return _networks(tuple(getattr(settings, "GANGSCHED_TRUSTED_PROXIES", ())))


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as proxies write it: bare, ``1.2.3.4:port`` or ``[v6]:port``; None if none."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _trusted(address, networks: tuple[Network, ...]) -> bool:
    return address is not None and any(address in network for network in networks)


def client_address(request) -> str:
    """The client's address as a string (a Django or DRF request); ``REMOTE_ADDR`` unless the
    peer is a trusted proxy (module docstring). "" when the peer has no address."""
    meta = request.META
    peer = meta.get("REMOTE_ADDR", "") or ""
    networks = trusted_proxies()
    if not networks or not _trusted(_address(peer), networks):
        return peer
    forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
    chain = [hop for hop in forwarded.split(",") if hop.strip()][-MAX_HOPS:]
    if not chain and meta.get("HTTP_X_REAL_IP", "").strip():
        chain = [meta["HTTP_X_REAL_IP"]]
    client = peer
    for hop in reversed(chain):
        address = _address(hop)
        if address is None:  # not an address: nothing to its left can be believed either
            break
        client = str(address)
        if not _trusted(address, networks):
            break
    return client
