"""The client's address (dashboard/client_address.py): forwarded headers are believed only from
a peer in GANGSCHED_TRUSTED_PROXIES, and then the right-most address that is not a trusted proxy
is the client. The same function feeds the sign-in limits (test_rate_limits.py), the API
throttles and the /metrics allowlist (below)."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory

from dashboard.client_address import client_address
from gangsched.settings.env import parse_networks

PROXIES = ["10.0.0.0/8", "2001:db8::/32"]


def address(peer: str, forwarded: str | None = None, real_ip: str | None = None) -> str:
    headers = {}
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    if real_ip is not None:
        headers["HTTP_X_REAL_IP"] = real_ip
    return client_address(RequestFactory().get("/", REMOTE_ADDR=peer, **headers))


def test_with_no_trusted_proxy_the_headers_are_ignored(settings):
    settings.GANGSCHED_TRUSTED_PROXIES = []
    assert address("10.1.2.3", "198.51.100.1") == "10.1.2.3"
    assert address("10.1.2.3", real_ip="198.51.100.1") == "10.1.2.3"


def test_an_untrusted_peer_is_the_client_whatever_it_forwards(settings):
    settings.GANGSCHED_TRUSTED_PROXIES = PROXIES
    assert address("198.51.100.5", "10.0.0.1, 127.0.0.1") == "198.51.100.5"
    assert address("198.51.100.5", real_ip="10.0.0.1") == "198.51.100.5"


@pytest.mark.parametrize(
    ("forwarded", "client"),
    [
        ("198.51.100.1", "198.51.100.1"),
        ("203.0.113.9, 198.51.100.1", "198.51.100.1"),  # the left part is the client's own claim
        ("203.0.113.9, 198.51.100.1, 10.2.0.1, 10.3.0.1", "198.51.100.1"),  # two trusted hops skipped
        ("198.51.100.1:4711", "198.51.100.1"),  # a port, as some proxies write
        ("[2001:db9::1]:443, 2001:db8::7", "2001:db9::1"),
        ("not-an-address, 198.51.100.1", "198.51.100.1"),
        ("198.51.100.1, garbage", "10.0.0.2"),  # nothing left of garbage is believed
        ("10.9.9.9", "10.9.9.9"),  # all trusted: the left-most hop
        ("", "10.0.0.2"),
    ],
)
def test_a_trusted_peer_gives_the_right_most_untrusted_address(settings, forwarded, client):
    settings.GANGSCHED_TRUSTED_PROXIES = PROXIES
    assert address("10.0.0.2", forwarded) == client


def test_a_trusted_peers_x_real_ip_counts_without_x_forwarded_for(settings):
    settings.GANGSCHED_TRUSTED_PROXIES = PROXIES
    assert address("10.0.0.2", real_ip="198.51.100.3") == "198.51.100.3"
    assert address("10.0.0.2", "198.51.100.4", real_ip="198.51.100.3") == "198.51.100.4"


def test_the_metrics_allowlist_reads_the_client_behind_a_trusted_proxy(settings, db):
    settings.GANGSCHED_METRICS_TOKEN = ""
    settings.GANGSCHED_METRICS_ALLOW = "127.0.0.1"
    client = Client()
    spoofed = client.get("/metrics", REMOTE_ADDR="198.51.100.5", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert spoofed.status_code == 403  # an untrusted peer's header is ignored
    settings.GANGSCHED_TRUSTED_PROXIES = ["10.0.0.0/8"]
    through = client.get("/metrics", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.5")
    assert through.status_code == 403  # the ingress's own address no longer lets outsiders in
    assert client.get("/metrics", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="127.0.0.1").status_code == 200


def test_the_setting_takes_addresses_and_networks_and_names_a_bad_one():
    assert parse_networks("GANGSCHED_TRUSTED_PROXIES", None) == []
    assert parse_networks("GANGSCHED_TRUSTED_PROXIES", "10.0.0.1, 10.1.0.0/16,2001:db8::/32") == [
        "10.0.0.1/32",
        "10.1.0.0/16",
        "2001:db8::/32",
    ]
    with pytest.raises(ImproperlyConfigured, match="GANGSCHED_TRUSTED_PROXIES: 'ingress' is not an IP"):
        parse_networks("GANGSCHED_TRUSTED_PROXIES", "10.0.0.1,ingress")
