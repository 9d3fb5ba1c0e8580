"""The blind player's phone page (Appendix E.9): routes and short codes.

``/listen?board=7&side=black&code=4821`` is one player's page of one board: the
daemon's phrases for him arrive on its event stream and the phone's own speech
engine says them (why: ``daemon.speech.phone``); its buttons ask the E.9.d
questions, answered on this page alone (``by`` its side, ``to: page``).

A page is reached by a **short code** the arbiter reads out: the player opens
``/l`` (a field for the code) or ``/l/4821``, and is sent on to his page. The code
is what lets a page listen and ask: without it, anyone in the hall could ask
questions into a blind player's ear. Four digits, read out once; wrong codes count
as wrong tokens do (``TokenGuard``: an address that keeps guessing waits). The
codes are made from ``broadcast.token`` (stable over restarts, so a phone's page
reconnects after one), or, without a token, from a secret of this run; the log
prints them at start and the arbiter's console shows them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import inspect
import json
import logging
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from daemon.broadcast import security, strictjson
from daemon.broadcast.authguard import TokenGuard
from daemon.broadcast.connections import client_key
from daemon.broadcast.controls import ControlError, build_request
from daemon.broadcast.phonepage import code_page as code_html
from daemon.broadcast.phonepage import listen_page

log = logging.getLogger(__name__)

SIDES = ("white", "black")
ASKED = ("what", "square", "piece", "order", "rank", "file")
"""What a page's question may carry: ``by`` and ``to`` are the page's own."""

#: A page's stream says it is alive this often (seconds), so a phone notices a
#: dead Wi-Fi and its EventSource reconnects.
KEEPALIVE = 5.0


class PhoneCodes:
    """The short code of each player's page: four digits, one per (board, side)."""

    def __init__(self, boards: Iterable[str], key: str = "") -> None:
        secret = key.encode() if key else secrets.token_bytes(16)
        self.by_code: dict[str, tuple[str, str]] = {}
        self.by_page: dict[tuple[str, str], str] = {}
        for board in boards:
            for side in SIDES:
                attempt = 0
                while True:
                    digest = hmac.new(secret, f"{board}/{side}/{attempt}".encode(), hashlib.sha256)
                    code = f"{int.from_bytes(digest.digest()[:4], 'big') % 10000:04d}"
                    if code not in self.by_code:
                        break
                    attempt += 1
                self.by_code[code] = (board, side)
                self.by_page[(board, side)] = code

    def of(self, board: str) -> dict[str, str]:
        return {
            side: self.by_page[(board, side)] for side in SIDES if (board, side) in self.by_page
        }

    def summary(self) -> str:
        boards = dict.fromkeys(board for board, _ in self.by_page)
        return "; ".join(
            f"board {b}: white {self.by_page[(b, 'white')]}, black {self.by_page[(b, 'black')]}"
            for b in boards
        )


LineOf = Callable[[str, str], Any]
"""(board, side) -> its ``PhoneLine``, or None (a board that does not speak)."""


class Phones:
    """What the web app needs of the phone pages: the codes and the lines (and,
    once installed, the app's token guard, hosts, clock and request callback)."""

    def __init__(
        self, codes: PhoneCodes, line_of: LineOf, speech: dict[str, Any] | None = None
    ) -> None:
        self.codes = codes
        self.line_of = line_of
        #: the vocabulary's lang, request names and colours, for the page's buttons
        self.speech = speech or {}
        self.tokens = TokenGuard()
        self.hosts: Any = ()
        self.now: Callable[[], float] = lambda: 0.0
        self.on_request: Callable[[str, Any], Any] | None = None


PHONES_KEY: web.AppKey[Phones] = web.AppKey("phones", Phones)


def _json_error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status, dumps=strictjson.dumps)


def _checked(request: web.Request) -> tuple[str, str, Any] | web.Response:
    """The page's board, side and line, if its code is right (else 403/404/429)."""
    phones = request.app.get(PHONES_KEY)
    if phones is None:
        return _json_error(404, "no phone pages here (the daemon's own page has them)")
    tokens = phones.tokens
    address = client_key(request.remote or "?")
    wait = tokens.retry_after(address)
    if wait is not None:
        response = _json_error(429, f"{tokens.why_locked(address)}: wait {wait} s")
        response.headers["Retry-After"] = str(wait)
        return response
    board, side = request.query.get("board", ""), request.query.get("side", "")
    code = request.query.get("code", "")
    expected = phones.codes.by_page.get((board, side))
    if expected is None or not hmac.compare_digest(expected.encode(), code.encode()):
        tokens.failed(address)
        return _json_error(403, "wrong or missing code: ask the arbiter for your page's code")
    tokens.succeeded(address)
    line = phones.line_of(board, side)
    if line is None:
        return _json_error(503, f"board {board} does not speak (speech is off for it)")
    return board, side, line


def _lang(request: web.Request) -> str:
    phones = request.app.get(PHONES_KEY)
    return str(phones.speech.get("lang") or "de") if phones is not None else "en"


async def code_page(request: web.Request) -> web.StreamResponse:
    """``/l``: a field for the code the arbiter read out (``/l?code=``: on to it)."""
    if "code" in request.query:
        return await by_code(request)
    return web.Response(text=code_html(_lang(request)), content_type="text/html",
                        headers={"Cache-Control": "no-cache"})  # fmt: skip


async def by_code(request: web.Request) -> web.StreamResponse:
    """``/l/4821`` (or ``/l?code=4821``): on to that player's page."""
    phones = request.app.get(PHONES_KEY)
    code = (request.match_info.get("code") or request.query.get("code", "")).strip()
    if phones is None:
        return web.Response(status=404, text="No phone pages here.")
    tokens = phones.tokens
    address = client_key(request.remote or "?")
    wait = tokens.retry_after(address)
    if wait is not None:
        return web.Response(status=429, text=f"Too many wrong codes: wait {wait} s.",
                            headers={"Retry-After": str(wait)})  # fmt: skip
    page = phones.codes.by_code.get(code)
    if page is None:
        tokens.failed(address)
        text = code_html(_lang(request)).replace(
            '<p id="error" role="alert"></p>',
            '<p id="error" role="alert">No page has this code: ask the arbiter again.</p>',
        )
        return web.Response(status=404, content_type="text/html", text=text)
    tokens.succeeded(address)
    board, side = page
    raise web.HTTPSeeOther(f"/listen?board={board}&side={side}&code={code}")


async def page(request: web.Request) -> web.Response:
    checked = _checked(request)
    if isinstance(checked, web.Response):
        return checked
    board, side, _line = checked
    speech = request.app[PHONES_KEY].speech
    return web.Response(text=listen_page(board, side, speech), content_type="text/html",
                        headers={"Cache-Control": "no-cache"})  # fmt: skip


async def stream(request: web.Request) -> web.StreamResponse:
    """The page's phrases (SSE): ``say`` (text, lang, rate, id) and ``cancel``."""
    checked = _checked(request)
    if isinstance(checked, web.Response):
        return checked
    board, side, line = checked
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no"})  # fmt: skip
    await response.prepare(request)
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=200)

    def sink(message: dict[str, Any]) -> None:
        with contextlib.suppress(asyncio.QueueFull):  # a stuck page loses, never the loop
            queue.put_nowait(message)

    detach = line.attach(sink)
    try:
        await response.write(b": listening\n\n" + _sse({"type": "hello", "board": board,
                                                         "side": side}))  # fmt: skip
        while True:
            try:
                message = await asyncio.wait_for(queue.get(), KEEPALIVE)
            except TimeoutError:
                await response.write(b": alive\n\n")
                continue
            await response.write(_sse(message))
            if message.get("type") == "bye":
                break
    except (ConnectionError, RuntimeError):
        pass
    finally:
        detach()
    return response


def _sse(message: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(message, ensure_ascii=False).encode() + b"\n\n"


async def _posted(request: web.Request) -> tuple[str, str, Any, dict[str, Any]] | web.Response:
    """A page's POST: its board, side and line (``_checked``) and its JSON object,
    or the answer that refuses it."""
    checked = _checked(request)
    if isinstance(checked, web.Response):
        return checked
    refused = security.origin_problem(request, request.app[PHONES_KEY].hosts)
    if refused:
        return _json_error(403, refused)
    try:
        raw = await request.read()
        body = strictjson.loads_body(raw)
    except strictjson.BodyError as exc:
        return _json_error(400, str(exc))
    if not isinstance(body, dict):
        return _json_error(400, "the body must be a JSON object")
    return (*checked, body)


async def ask(request: web.Request) -> web.Response:
    """A question from the page (E.9.d): through the rules core like a clock
    button's, asked by the page's side, answered on this page alone."""
    posted = await _posted(request)
    if isinstance(posted, web.Response):
        return posted
    board, side, _line, body = posted
    unknown = [name for name in body if name not in ASKED]
    if unknown:
        return _json_error(
            400, f"unknown field {str(unknown[0])[:40]!r}; fields: {', '.join(ASKED)}"
        )
    if body.get("what") == "silence":
        return _json_error(400, "'silence' is the arbiter's")
    phones = request.app[PHONES_KEY]
    try:
        sensor_request = build_request("say", {**body, "by": side}, float(phones.now()))
    except ControlError as exc:
        return _json_error(exc.status, str(exc))
    args = {**sensor_request.args, "to": "page"}
    on_request = phones.on_request
    if on_request is None:
        return _json_error(503, "no rules core is listening for questions")
    outcome = on_request(board, type(sensor_request)(t=sensor_request.t, action="say", args=args))
    if inspect.isawaitable(outcome):
        await outcome
    return web.json_response({"accepted": True, "board": board, "by": side}, status=202)


async def spoken(request: web.Request) -> web.Response:
    """The page has said a phrase: the schedule may go on to the next."""
    posted = await _posted(request)
    if isinstance(posted, web.Response):
        return posted
    _board, _side, line, body = posted
    phrase = body.get("id")
    if isinstance(phrase, bool) or not isinstance(phrase, int):
        return _json_error(400, "'id' must be the phrase's id")
    return web.json_response({"waited": line.spoken(phrase)})


def install(
    app: web.Application,
    phones: Phones | None,
    *,
    tokens: TokenGuard,
    hosts: Any,
    now: Callable[[], float],
    on_request: Callable[[str, Any], Any] | None,
) -> None:
    """The phone pages' routes; without ``phones`` (a relay) they say there are none.
    Wrong codes count in the app's ``tokens`` guard, as wrong tokens do."""
    if phones is not None:
        phones.tokens, phones.hosts, phones.now, phones.on_request = tokens, hosts, now, on_request
        app[PHONES_KEY] = phones
    app.router.add_get("/l", code_page)
    app.router.add_get("/l/{code}", by_code)
    app.router.add_get("/listen", page)
    app.router.add_get("/listen/events", stream)
    app.router.add_post("/listen/ask", ask)
    app.router.add_post("/listen/spoken", spoken)
