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
routes and ``/ws`` accept no ``Origin`` (curl, scripts) or one whose host is
the request's own ``Host`` or one of ``broadcast.hosts``; when ``hosts`` is
set, the ``Host`` header must be one of them too (no DNS rebinding).
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


def _host_name(value: str) -> str:
    """``pi.local:8080`` -> ``pi.local``; ``[::1]:8080`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def origin_problem(request: web.BaseRequest, hosts: list[str]) -> str | None:
    """Why this request's ``Origin``/``Host`` is refused, or None when it is fine."""
    allowed = {h.lower() for h in hosts}
    host = _host_name(request.host or "")
    if allowed and host not in allowed:
        return f"the Host {host!r} is not one of broadcast.hosts"
    origin = request.headers.get("Origin")
    if origin is None:
        return None  # not a browser's cross-site request (curl, scripts, same-origin GET)
    try:
        origin_host = (urlsplit(origin).hostname or "").lower()
    except ValueError:
        origin_host = ""
    if origin_host and (origin_host == host or origin_host in allowed):
        return None
    return f"requests from the page at {origin[:80]!r} are refused (Origin check)"


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
