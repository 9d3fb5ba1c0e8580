"""Security headers on every response, and the ``Origin`` check.

Hooked into the app once (``install``), so every route has them, today's and
tomorrow's (the arbiter's console), errors included:

- ``Content-Security-Policy``: nothing from elsewhere; scripts only the page's
  own inline scripts, allowed by their SHA-256 (computed from the HTML being
  sent, so a page that changes its script needs no change here); no framing.
- ``X-Frame-Options: DENY`` (older browsers), ``X-Content-Type-Options:
  nosniff``, ``Referrer-Policy: no-referrer``.

``Origin``: a browser names the page that makes a request. A page elsewhere
(another site, or one reached by a rebound DNS name) may read the feed like any
viewer, but must not change the game nor open the WebSocket: state-changing
routes and ``/ws`` accept no ``Origin`` (curl, scripts) or one that is this
server's origin as the browser sees it: the request's scheme (``https`` with
TLS), the ``Host`` header's port (80 or 443 when it names none), and the
``Host``'s name or one of ``broadcast.hosts``. A page of the same machine on
another port (a second web app on the Pi, a printer's page) or served over the
other scheme is another origin, as browsers count them, and is refused. When
``hosts`` is set, the ``Host`` header must be one of them too (no DNS rebinding).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import re
from urllib.parse import urlsplit

from aiohttp import web

INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)

BASE_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

POLICY = (
    "default-src 'none'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


@functools.lru_cache(maxsize=16)
def content_security_policy(html: bytes | None) -> str:
    """The policy for one HTML body (its inline scripts by hash), or for any
    other response (no script at all)."""
    scripts = ["'self'"] if html else ["'none'"]
    for match in INLINE_SCRIPT.finditer(html or b""):
        digest = base64.b64encode(hashlib.sha256(match.group(1)).digest()).decode()
        scripts.append(f"'sha256-{digest}'")
    return POLICY.format(scripts=" ".join(scripts))


async def add_security_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """``on_response_prepare``: every response gets the headers."""
    for name, value in BASE_HEADERS.items():
        response.headers.setdefault(name, value)
    html = None
    if response.content_type == "text/html" and isinstance(response, web.Response):
        body = response.body
        html = bytes(body) if isinstance(body, bytes | bytearray) else b""
    response.headers.setdefault("Content-Security-Policy", content_security_policy(html))


DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_and_port(value: str, scheme: str) -> tuple[str, int | None]:
    """``pi.local:8080`` -> (``pi.local``, 8080); ``[::1]`` -> (``::1``, the scheme's
    port); a port that is not a number -> None (never equal to an Origin's)."""
    value = value.strip().lower()
    default = DEFAULT_PORTS.get(scheme)
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, port = value.split(":")
    else:
        name, port = value, ""
    if not port:
        return name, default
    return name, int(port) if port.isascii() and port.isdigit() else None


def _origin_of(origin: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of an ``Origin`` header, or None when it is none
    (``null``, a path, a malformed port)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return scheme, parts.hostname.lower(), port if port is not None else DEFAULT_PORTS[scheme]


def origin_problem(request: web.BaseRequest, hosts: list[str]) -> str | None:
    """Why this request's ``Origin``/``Host`` is refused, or None when it is fine."""
    allowed = {h.lower() for h in hosts}
    scheme = "https" if request.secure else "http"
    host, port = _host_and_port(request.host or "", scheme)
    if allowed and host not in allowed:
        return f"the Host {host[:80]!r} is not one of broadcast.hosts"
    origin = request.headers.get("Origin")
    if origin is None:
        return None  # not a browser's cross-site request (curl, scripts, same-origin GET)
    theirs = _origin_of(origin)
    if theirs is not None and port is not None:
        their_scheme, their_host, their_port = theirs
        if (
            their_scheme == scheme
            and their_port == port
            and (their_host == host or their_host in allowed)
        ):
            return None
    return (
        f"requests from the page at {origin[:80]!r} are refused (Origin check: this "
        f"server is {scheme}://{host[:80]}:{port})"
    )


def install(app: web.Application) -> None:
    app.on_response_prepare.append(add_security_headers)


class HardenedHandler(web.RequestHandler):
    """aiohttp's protocol, whose own error replies (a malformed request: 400, before
    any route) carry the security headers too: they never pass the app's hook."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        response = super().handle_error(request, status, exc, message)
        for name, value in BASE_HEADERS.items():
            response.headers.setdefault(name, value)
        response.headers.setdefault("Content-Security-Policy", content_security_policy(None))
        return response


def hardened_handler(server: web.Server) -> web.RequestHandler:
    """What ``server()`` makes, as a ``HardenedHandler`` (same arguments)."""
    kwargs = getattr(server, "_kwargs", None)
    if kwargs is None:  # another aiohttp: its own handler, without the headers on errors
        return server()
    return HardenedHandler(server, loop=asyncio.get_running_loop(), **kwargs)
