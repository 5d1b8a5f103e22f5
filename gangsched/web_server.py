"""The web server: uvicorn, believing forwarded headers from ``GANGSCHED_TRUSTED_PROXIES`` only.

uvicorn rewrites the client's address from ``X-Forwarded-For`` (and the scheme from
``X-Forwarded-Proto``) before the application sees the request, by default for every peer on
127.0.0.1 or ::1 (its ``--forwarded-allow-ips``, else ``$FORWARDED_ALLOW_IPS``). ``make run``, a
sidecar proxy and ``kubectl port-forward`` all connect from loopback, so there any client could
name its own address, and every limit by address (dashboard/client_address.py, which believes
the headers only from trusted proxies) would count one of the client's choosing: rotating the
header would escape the sign-in throttle. So every place that starts the web server (scripts/run.py,
the image and the Deployment) starts it through here, and uvicorn gets ``--forwarded-allow-ips``
with exactly the trusted proxies, or ``--no-proxy-headers`` when there are none (the default):
the server and the application then agree on who the client is, and ``FORWARDED_ALLOW_IPS`` in
the environment no longer matters.

    python -m gangsched.web_server gangsched.asgi:application --host 0.0.0.0 --port 8000 ...

runs uvicorn with those arguments and these. The setting is parsed here, without Django (the
supervisor and uvicorn's parent process load no settings), by the rule the settings apply.
"""

from __future__ import annotations

import ipaddress
import os
import sys

VARIABLE = "GANGSCHED_TRUSTED_PROXIES"
#: uvicorn's own switches for forwarded headers: the setting decides them, never a command line.
PROXY_OPTIONS = ("--proxy-headers", "--no-proxy-headers", "--forwarded-allow-ips")
EXIT_STATUS = 2  # a usage error, as the settings exit on a bad SECRET_KEY


def proxy_arguments(trusted: str | None) -> list[str]:
    """uvicorn's arguments for ``GANGSCHED_TRUSTED_PROXIES`` (comma-separated addresses or
    networks): ``--forwarded-allow-ips`` with each as a network (``10.0.0.1`` is ``10.0.0.1/32``,
    ``10.0.0.1/8`` is ``10.0.0.0/8``: uvicorn would take a network with host bits for a name and
    trust nothing), or ``--no-proxy-headers`` when none is given. ValueError names a bad entry."""
    networks = []
    for item in (trusted or "").split(","):
        if not item.strip():
            continue
        try:
            networks.append(str(ipaddress.ip_network(item.strip(), strict=False)))
        except ValueError:
            raise ValueError(f"{VARIABLE}: {item.strip()!r} is not an IP address or network") from None
    if not networks:
        return ["--no-proxy-headers"]
    return ["--forwarded-allow-ips", ",".join(networks)]


def arguments(argv: list[str], environ=os.environ) -> list[str]:
    """uvicorn's whole command line: ``argv`` and the proxy arguments of ``environ``."""
    given = [arg for arg in argv if arg.partition("=")[0] in PROXY_OPTIONS]
    if given:
        raise ValueError(f"{given[0]} is decided by {VARIABLE}: set that instead")
    return [*argv, *proxy_arguments(environ.get(VARIABLE))]


def main(argv: list[str] | None = None) -> None:
    try:
        args = arguments(sys.argv[1:] if argv is None else argv)
    except ValueError as error:
        print(f"gangsched: {error}", file=sys.stderr, flush=True)
        sys.exit(EXIT_STATUS)
    from uvicorn.main import main as uvicorn

    uvicorn.main(args=args, prog_name="uvicorn")


if __name__ == "__main__":
    main()
