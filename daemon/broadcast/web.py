"""The web app: the live page, the feed (SSE, WebSocket), PGN, state, controls.

Read-only unless a token is configured. Every route is fixed (no file is served
from disk, so there is no path to traverse); board ids are looked up in the
hub, never used as paths; request bodies are capped (``client_max_size``).
The same app serves the daemon's own boards and a relay's boards from MQTT.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aiohttp import HttpVersion11, WSMsgType, web

from daemon.broadcast import console, mending, pairingcontrol, phone, security, strictjson
from daemon.broadcast.authguard import TokenGuard
from daemon.broadcast.connections import ConnectionGuard, client_key
from daemon.broadcast.controls import (
    ACTIONS,
    PAIRINGS_MAX_FILE,
    ControlError,
    build_request,
    check_game_state,
    token_ok,
)
from daemon.broadcast.hub import Hub, Subscriber
from daemon.broadcast.logthrottle import throttled
from daemon.broadcast.page import board_svg as draw_board
from daemon.broadcast.page import render_page
from daemon.broadcast.viewers import SSE_CHUNKED, SSE_PLAIN, WS_TEXT, TransportSink, http_chunk
from drivers.sensors import Request

log = logging.getLogger(__name__)

RequestCallback = Callable[[str, Request], Awaitable[Any] | Any]

HUB_KEY: web.AppKey[Hub] = web.AppKey("hub", Hub)
ON_REQUEST_KEY: web.AppKey[Any] = web.AppKey("on_request", object)
NOW_KEY: web.AppKey[Any] = web.AppKey("now", object)
GUARD_KEY: web.AppKey[ConnectionGuard] = web.AppKey("guard", ConnectionGuard)
TOKENS_KEY: web.AppKey[TokenGuard] = web.AppKey("tokens", TokenGuard)

PGN_TYPE = "application/x-chess-pgn"
#: A pairings file's body (``/control/pairings``) may be larger than any other
#: control's: the file as JSON text (a newline is two bytes, a letter up to three).
PAIRINGS_MAX_BODY = 3 * PAIRINGS_MAX_FILE


def _body_limit(action: str, max_body: int) -> int:
    """What one action's body may weigh: ``broadcast.max_body``, more for a file."""
    return max(max_body, PAIRINGS_MAX_BODY) if action == "pairings" else max_body


def json_response(data: Any, *, status: int = 200, headers: Any = None) -> web.Response:
    """A JSON reply, strict (never NaN or Infinity): every route's JSON goes here."""
    return web.json_response(data, status=status, headers=headers, dumps=strictjson.dumps)


def _error(status: int, message: str, field: str | None = None) -> web.Response:
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    return json_response(body, status=status)


def _boards_param(request: web.Request, hub: Hub) -> list[str] | web.Response:
    """The boards a request asks for (``?board=1,2``); all without the parameter."""
    raw = request.query.get("board")
    if not raw:
        return hub.board_ids()
    # Each board once: ``?board=1,1,1,...`` (4,000 times in one header line) had the
    # game's PGN or state made 4,000 times for one request.
    ids = list(dict.fromkeys(part for part in raw.split(",") if part))
    unknown = [b for b in ids if b not in hub.boards]
    if unknown:
        return _no_board(unknown[0], hub)
    return ids


def _no_board(asked: str, hub: Hub) -> web.Response:
    """404 naming the board asked for (cut short: it is the client's text)."""
    shown = asked if len(asked) <= 40 else asked[:37] + "..."
    return _error(404, f"no board {shown!r}; boards: {', '.join(hub.boards) or 'none'}")


def _one_board(request: web.Request, hub: Hub) -> str | web.Response:
    raw = request.query.get("board")
    if raw is None:
        if len(hub.boards) == 1:
            return next(iter(hub.boards))
        return _error(400, f"say which board: ?board=<id> ({', '.join(hub.boards)})")
    if raw not in hub.boards:
        return _no_board(raw, hub)
    return raw


def _control_board(request: web.Request, hub: Hub, action: str) -> str | web.Response | None:
    """The board a control is for, as ``_one_board``; an action about the daemon,
    not a game (the console's login), may name none among several boards."""
    boardless = action in console.BOARDLESS_ACTIONS and "board" not in request.query
    if boardless and len(hub.boards) != 1:
        return None
    return _one_board(request, hub)


def _last_seq(request: web.Request) -> int | None:
    raw = request.headers.get("Last-Event-ID") or request.query.get("since")
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        return None  # a foreign id: treated as a fresh viewer (snapshot)


async def page(request: web.Request) -> web.Response:
    hub = request.app[HUB_KEY]
    chosen = request.query.get("board") or None
    async with hub.newcomer():
        text = render_page(hub, chosen)
    return web.Response(
        text=text,
        content_type="text/html",
        headers={"Cache-Control": "no-cache"},
    )


async def board_svg(request: web.Request) -> web.Response:
    hub = request.app[HUB_KEY]
    board_id = _one_board(request, hub)
    if isinstance(board_id, web.Response):
        return board_id
    size = None
    with contextlib.suppress(ValueError):
        size = max(120, min(2000, int(request.query.get("size", "0")))) or None
    async with hub.newcomer():  # a picture not drawn yet: python-chess's, some ms
        drawn = draw_board(hub, board_id, size)
    # the same address shows the next position after a move: a browser asks again
    # each time (no-cache), and hears "the same" (304) while the board has not changed
    headers = {"Cache-Control": "no-cache", "ETag": drawn.etag}
    if drawn.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(text=drawn.svg, content_type="image/svg+xml", headers=headers)


async def game_pgn(request: web.Request) -> web.Response:
    hub = request.app[HUB_KEY]
    boards = _boards_param(request, hub)
    if isinstance(boards, web.Response):
        return boards
    async with hub.newcomer():
        text = hub.pgn(boards)
    return web.Response(
        text=text,
        content_type=PGN_TYPE,
        charset="utf-8",
        headers={"Cache-Control": "no-cache"},
    )


async def state_json(request: web.Request) -> web.Response:
    hub = request.app[HUB_KEY]
    boards = _boards_param(request, hub)
    if isinstance(boards, web.Response):
        return boards
    status: dict[str, Any] | None = None
    guard = request.app.get(GUARD_KEY)
    if guard is not None:
        status = guard.status()  # the server's limits and connections
        status.update(request.app[TOKENS_KEY].status())
    async with hub.newcomer():  # a scraper's storm takes turns with the bus line
        text = hub.state_json(boards, status)
    return web.Response(
        text=text, content_type="application/json", headers={"Cache-Control": "no-cache"}
    )


def _closer(request: web.Request) -> Callable[[], None]:
    """Closes a viewer's connection when the hub drops it, even mid-write."""

    def close() -> None:
        transport = request.transport
        if transport is not None:
            transport.abort()

    return close


def _viewer_refused(request: web.Request) -> web.Response | None:
    """503 when the request's address has its ``max_viewers_per_address`` feeds;
    else None, and the connection counts as a viewer until the request ends."""
    guard = request.app.get(GUARD_KEY)
    why = guard.start_viewer(request.transport) if guard is not None else None
    if guard is None or why is None:
        return None
    response = _error(503, f"{why} (at most {guard.limits.viewers_per_address} live feeds "
                           "from one address): close another page first")  # fmt: skip
    response.headers["Retry-After"] = "5"
    return response


async def events_sse(request: web.Request) -> web.StreamResponse:
    hub = request.app[HUB_KEY]
    boards = _boards_param(request, hub) if "board" in request.query else None
    if isinstance(boards, web.Response):
        return boards
    refused = _viewer_refused(request)
    if refused is not None:
        return refused
    with_state = request.query.get("state") in ("1", "true", "yes")
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        }
    )
    # HTTP/1.1 streams in chunks; we frame them ourselves when writing directly.
    chunked = request.version >= HttpVersion11
    if chunked:
        response.enable_chunked_encoding()
    async with hub.newcomer():  # a few bytes: written at once, never waiting on the viewer
        await response.prepare(request)
        try:
            await response.write(b"retry: 1000\n\n")  # also sends the headers
        except (ConnectionError, RuntimeError):
            return response
        transport = request.transport
        if transport is None or transport.is_closing():
            return response
        ping = b"event: ping\ndata: {}\n\n" if with_state else b": keep-alive\n\n"
        sink = TransportSink(
            transport,
            SSE_CHUNKED if chunked else SSE_PLAIN,
            ping=http_chunk(ping) if chunked else ping,
            max_messages=hub.settings.client_queue,
        )
        # From here on the hub writes every message straight to the transport.
        subscriber = hub.subscribe(
            boards, with_state=with_state, last_seq=_last_seq(request), sink=sink
        )
    subscriber.on_drop = _closer(request)
    try:
        await subscriber.wait_dropped()
    finally:
        hub.unsubscribe(subscriber)
    return response


async def events_ws(request: web.Request) -> web.StreamResponse:
    hub = request.app[HUB_KEY]
    boards = _boards_param(request, hub) if "board" in request.query else None
    if isinstance(boards, web.Response):
        return boards
    refused = security.origin_problem(request, hub.settings.hosts)
    if refused:
        throttled(log, "origin", logging.WARNING, "refused a WebSocket viewer: %s", refused)
        return _error(403, refused)
    too_many = _viewer_refused(request)
    if too_many is not None:
        return too_many
    # Uncompressed, so that one encoded frame serves every viewer.
    ws = web.WebSocketResponse(heartbeat=hub.settings.keepalive, max_msg_size=4096, compress=False)
    await ws.prepare(request)
    transport = request.transport
    if transport is None or transport.is_closing():
        return ws
    sink = TransportSink(transport, WS_TEXT, ping=None, max_messages=hub.settings.client_queue)
    async with hub.newcomer():
        subscriber = hub.subscribe(
            boards,
            with_state=request.query.get("state") in ("1", "true", "yes"),
            last_seq=_last_seq(request),
            sink=sink,
        )
    subscriber.on_drop = _closer(request)
    try:
        # Read-only feed: incoming messages are ignored, but reading notices a
        # close, and a drop (the connection aborted) ends the reading.
        async for msg in ws:
            if msg.type in (WSMsgType.CLOSE, WSMsgType.ERROR) or subscriber.dropped:
                break
    except (ConnectionError, RuntimeError):
        log.debug("a WebSocket viewer went away")
    finally:
        subscriber.closed = True
        hub.unsubscribe(subscriber)
        if not ws.closed:
            with contextlib.suppress(Exception):
                await ws.close()
    return ws


async def _tick_viewers(hub: Hub) -> None:
    """One timer for every viewer: keep-alives for idle streams, and dropping a
    connection that went away or whose buffer has not moved for ``write_timeout``."""
    settings = hub.settings
    period = max(0.05, min(settings.keepalive, settings.write_timeout) / 2)
    while True:
        await hub.a_viewer()
        await asyncio.sleep(period)
        for subscriber in list(hub.subscribers):
            sink = subscriber.sink
            if not isinstance(sink, TransportSink) or subscriber.dropped:
                continue
            if sink.transport.is_closing():
                subscriber.drop()  # the viewer went away
            elif not sink.tick(period, settings.keepalive, settings.write_timeout):
                hub.drop_viewer(subscriber, f"its connection stalled {settings.write_timeout} s")


async def _viewer_ticker(app: web.Application) -> AsyncIterator[None]:
    task = asyncio.create_task(_tick_viewers(app[HUB_KEY]))
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _locked_out(seconds: int, why: str) -> web.Response:
    response = _error(429, f"{why}: wait {seconds} s")
    response.headers["Retry-After"] = str(seconds)
    return response


def _offered_token(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("X-DGT-Token")


async def control(request: web.Request) -> web.Response:
    """An arbiter's POST: Origin, token, body (size, time, strict JSON, schema),
    then the game's state; only then is it handed to the daemon."""
    hub = request.app[HUB_KEY]
    settings = hub.settings
    action = request.match_info.get("action", "say")
    refused = security.origin_problem(request, settings.hosts)
    if refused:
        throttled(log, "origin", logging.WARNING, "refused a control request: %s", refused)
        return _error(403, refused)
    if not settings.token:
        return _error(
            403,
            "the arbiter's controls are disabled: set broadcast.token in the configuration",
        )
    tokens = request.app[TOKENS_KEY]
    address = client_key(request.remote or "?")
    wait = tokens.retry_after(address)
    if wait is not None:
        return _locked_out(wait, tokens.why_locked(address))
    if not token_ok(settings.token, _offered_token(request)):
        wait = tokens.failed(address)
        if wait is not None:
            return _locked_out(wait, tokens.why_locked(address))
        return _error(403, "wrong or missing token (send 'Authorization: Bearer <token>')")
    tokens.succeeded(address)
    if action not in ACTIONS:
        return _error(404, f"unknown action {action!r}; known: {', '.join(ACTIONS)}")
    # the pairings name the boards themselves: no ?board=
    board_id = None if action == "pairings" else _control_board(request, hub, action)
    if isinstance(board_id, web.Response):
        return board_id
    limit = _body_limit(action, settings.max_body)
    too_large = _error(413, f"request body too large (limit {limit} bytes)")
    if (request.content_length or 0) > limit:
        return too_large
    try:
        async with asyncio.timeout(settings.body_timeout):
            raw = await _read_body(request, limit)
    except _TooLarge:
        return too_large
    except TimeoutError:
        return _error(408, f"the body did not arrive within {settings.body_timeout:g} s")
    if action == "pairings":
        return await _pairings(request, hub, raw)
    try:
        args = strictjson.loads_body(raw)
        sensor_request = build_request(action, args, float(request.app[NOW_KEY]()))
        planned = None  # a correction: what it will do
        if board_id is not None:
            record = hub.boards[board_id].record
            check_game_state(sensor_request, ended=record.result, moves=len(record.moves))
            planned = mending.check(record, sensor_request)
    except strictjson.BodyError as exc:
        return _error(400, str(exc), exc.field)
    except ControlError as exc:
        return _error(exc.status, str(exc), exc.field)
    if board_id is None or action in console.BOARDLESS_ACTIONS:
        answer = console.BOARDLESS_ACTIONS[action](hub, sensor_request.args)
        phones = request.app.get(phone.PHONES_KEY)
        if action == "check" and phones is not None:  # the console reads them out
            answer["phones"] = {b: phones.codes.of(b) for b in hub.board_ids()}
        return json_response({"accepted": True, "board": board_id, "action": action, **answer})
    if planned is not None and sensor_request.args.get("preview"):  # changes nothing
        return json_response({"board": board_id, "action": action, "preview": planned})
    on_request = request.app[ON_REQUEST_KEY]
    through_core = on_request is not None and action in console.FEED_ACTIONS
    if action in console.DISPLAY_ACTIONS and not through_core:  # the display's own
        try:
            answer = console.DISPLAY_ACTIONS[action](hub, board_id, sensor_request.args)
        except ControlError as exc:
            return _error(exc.status, str(exc), exc.field)
        return json_response({"accepted": True, "board": board_id, "action": action, **answer})
    if on_request is None and action in console.RELAY_ACTIONS:  # a relay's own
        try:
            answer = console.RELAY_ACTIONS[action](hub, board_id, sensor_request.args)
        except ControlError as exc:
            return _error(exc.status, str(exc), exc.field)
        return json_response({"accepted": True, "board": board_id, "action": action, **answer})
    if on_request is None:
        return _error(503, "no rules core is listening for requests")
    try:
        outcome = on_request(board_id, sensor_request)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except Exception as exc:
        log.exception("the request callback failed")
        return _error(500, f"the daemon could not take the request: {exc}")
    answer = {"accepted": True, "board": board_id, "action": action, "args": sensor_request.args}
    if action == "penalty":
        why = hub.boards[board_id].clock_by_hand
        answer.update(penalty_clock(outcome, why, sensor_request.args))
    if planned is not None:
        answer["plan"] = planned
    return json_response(answer, status=202)


class _TooLarge(Exception):
    """A control's body went past its action's limit."""


async def _read_body(request: web.Request, limit: int) -> bytes:
    """The body, read only up to ``limit`` (the app's ``client_max_size`` stays
    ``max_body`` for every other route: only a control, its token checked, may be
    a pairings file's size)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(65536):
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


async def _pairings(request: web.Request, hub: Hub, raw: bytes) -> web.Response:
    """``/control/pairings``: a round's pairings file names every board here
    (``daemon/broadcast/pairingcontrol.py``); previewed, it changes nothing."""
    try:
        args = strictjson.loads_body(raw)
        checked = build_request("pairings", args, float(request.app[NOW_KEY]()))
        planned = pairingcontrol.plan(hub, checked.args, checked.t)
    except strictjson.BodyError as exc:
        return _error(400, str(exc), exc.field)
    except ControlError as exc:
        return _error(exc.status, str(exc), exc.field)
    answer = planned.to_dict()
    if checked.args.get("preview"):
        return json_response({"action": "pairings", "preview": answer})
    on_request = request.app[ON_REQUEST_KEY]
    if on_request is None:  # a relay: its display names the boards
        pairingcontrol.apply_display(hub, planned.requests, console.DISPLAY_ACTIONS["players"])
        return json_response({"accepted": True, "action": "pairings", **answer})
    try:
        for board, players in planned.requests:  # through each board's core: journalled
            outcome = on_request(board, players)
            if inspect.isawaitable(outcome):
                await outcome
    except Exception as exc:
        log.exception("the request callback failed")
        return _error(500, f"the daemon could not take the request: {exc}")
    return json_response({"accepted": True, "action": "pairings", **answer}, status=202)


def penalty_clock(outcome: Any, why: str, args: dict[str, Any]) -> dict[str, Any]:
    """What the penalty's answer says of the clock: the daemon's ``outcome`` (a dict:
    ``clock``, the times it set, or ``by_hand``, why it could not), else the board's
    standing reason (``why``) to set it by hand; ``clock_set`` says which."""
    said = outcome if isinstance(outcome, dict) else {}
    if said.get("clock"):
        return {"clock": str(said["clock"]), "clock_set": True}
    by_hand = penalty_by_hand(str(said.get("by_hand") or why), args)
    return {"clock": by_hand, "clock_set": False} if by_hand else {}


def penalty_by_hand(why: str, args: dict[str, Any]) -> str:
    """What the arbiter must do on the clock after a penalty, when the daemon cannot
    (``why``: a board on a bus chain, or no clock the daemon sets): "Set the clock by
    hand: +3:00 on White's clock (...)". Empty when nothing is said."""
    if not why:
        return ""
    seconds = round(float(args.get("seconds", 120)))
    to = "Black" if args.get("to") == "black" else "White"
    return f"Set the clock by hand: +{seconds // 60}:{seconds % 60:02d} on {to}'s clock ({why})"


@web.middleware
async def _count_requests(request: web.Request, handler: Any) -> web.StreamResponse:
    """Tell the connection guard a request is under way: its headers arrived, and
    a viewer's feed (a request that lasts) is never taken for an idle connection."""
    guard = request.app.get(GUARD_KEY)
    if guard is None:
        return await handler(request)
    conn = guard.request_started(request.transport)
    try:
        return await handler(request)
    finally:
        guard.request_ended(conn)


@web.middleware
async def _no_tracebacks(request: web.Request, handler: Any) -> web.StreamResponse:
    """Whatever goes wrong in a handler, the client gets a short JSON error and the
    log one throttled line: never a traceback, never a flood."""
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except ConnectionError:
        raise
    except Exception as exc:
        throttled(log, f"handler:{type(exc).__name__}", logging.ERROR,
                  "%s %s failed: %s: %s", request.method, request.path,
                  type(exc).__name__, exc)  # fmt: skip
        return _error(500, "the server could not answer this request")


def build_app(
    hub: Hub,
    on_request: RequestCallback | None = None,
    now: Callable[[], float] | None = None,
    phones: phone.Phones | None = None,
) -> web.Application:
    """The aiohttp application over a hub (the daemon's, or a relay's); ``phones``:
    the blind players' phone pages (the daemon's, ``daemon.broadcast.phone``)."""
    app = web.Application(
        client_max_size=max(1024, hub.settings.max_body),
        middlewares=[_count_requests, _no_tracebacks],
    )
    security.install(app)
    app[HUB_KEY] = hub
    app[ON_REQUEST_KEY] = on_request
    app[TOKENS_KEY] = TokenGuard()
    loop_time = asyncio.get_running_loop().time if now is None else None
    app[NOW_KEY] = now or loop_time
    app.cleanup_ctx.append(_viewer_ticker)
    app.router.add_get("/", page)
    app.router.add_get("/board.svg", board_svg)
    app.router.add_get("/game.pgn", game_pgn)
    app.router.add_get("/state.json", state_json)
    app.router.add_get("/events", events_sse)
    app.router.add_get("/ws", events_ws)
    app.router.add_post("/control/{action}", control)
    app.router.add_post("/say", control)
    console.install(app)
    phone.install(app, phones, tokens=app[TOKENS_KEY], hosts=hub.settings.hosts,
                  now=app[NOW_KEY], on_request=on_request)  # fmt: skip
    return app


__all__ = ["GUARD_KEY", "HUB_KEY", "TOKENS_KEY", "Subscriber", "build_app"]
