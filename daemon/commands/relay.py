"""``dgt-bridge relay``: one round of many boards from MQTT, served as one page and PGN."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys

from daemon.broadcast.relay import Relay


def _broker(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":") if ":" in text else (text, "", "1883")
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: the broker is HOST:PORT") from None
    if not host or not 0 < number < 65536:
        raise argparse.ArgumentTypeError(f"{text!r}: the broker is HOST:PORT")
    return host.strip("[]"), number


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "relay",
        help="serve a round's boards from an MQTT broker (grid page, combined live PGN)",
        description=(
            "Subscribe to one round of a tournament on an MQTT broker and serve the grid "
            "page, /events, /state.json and /game.pgn with every board as one game "
            "(the URL a lichess broadcast polls)."
        ),
    )
    parser.add_argument(
        "--broker",
        type=_broker,
        default=("localhost", 1883),
        metavar="HOST:PORT",
        help="the MQTT broker (default localhost:1883)",
    )
    parser.add_argument("--tournament", required=True, help="tournament topic level")
    parser.add_argument("--round", required=True, help="round topic level (also PGN Round)")
    parser.add_argument(
        "--event",
        default=None,
        help="the tournament's name in every game's PGN Event (default: --tournament)",
    )
    parser.add_argument("--port", type=int, default=8080, help="web port (default 8080)")
    parser.add_argument("--address", default="0.0.0.0", help="web address (default 0.0.0.0)")
    parser.add_argument("--prefix", default="dgt-bridge", help="first topic level")
    parser.add_argument(
        "--client-id",
        default=None,
        help="MQTT client id (default from tournament and round; give two "
        "relays of one round different ids)",
    )
    parser.set_defaults(func=run)  # fmt: skip


async def _serve(args: argparse.Namespace) -> None:
    host, port = args.broker
    relay = Relay(host, port, args.tournament, args.round, address=args.address,
                  port=args.port, prefix=args.prefix, client_id=args.client_id,
                  event=args.event)  # fmt: skip
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await relay.start()
    print(
        f"relay: {args.tournament} round {args.round} from {host}:{port}; "
        f"page http://{args.address}:{relay.port}/  PGN http://{args.address}:{relay.port}/game.pgn",
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await relay.stop()


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(_serve(args))
    except OSError as exc:
        print(f"dgt-bridge relay: {exc}", file=sys.stderr)
        return 1
    return 0
