"""``dgt-bridge relay``: one round of many boards from MQTT, served as one page and PGN."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

from daemon.broadcast import boardkeys
from daemon.broadcast.mqtt import MqttSetupError, topic_level
from daemon.broadcast.relay import Relay
from daemon.broadcast.settings import LichessSettings, MqttSettings

PASSWORD_ENV = "DGT_BRIDGE_RELAY_PASSWORD"
LICHESS_TOKEN_ENV = "DGT_BRIDGE_LICHESS_TOKEN"
ARBITER_KEY_ENV = "DGT_BRIDGE_ARBITER_KEY"
HALL_KEY_ENV = "DGT_BRIDGE_HALL_KEY"
TOKEN_ENV = "DGT_BRIDGE_RELAY_TOKEN"


class SetupError(ValueError):
    """An option the relay cannot work with: said in one line, exit status 2."""


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
    parser.add_argument("--round", default=None,
                        help="round topic level (also PGN Round); needed but with "
                        "--print-board-key")  # fmt: skip
    parser.add_argument(
        "--event",
        default=None,
        help="the tournament's name in every game's PGN Event (default: --tournament)",
    )
    parser.add_argument("--port", type=int, default=8080, help="web port (default 8080)")
    parser.add_argument(
        "--address",
        default="0.0.0.0",
        help="web address (default 0.0.0.0: the whole local network; 127.0.0.1: this "
        "machine only); every address the page is reached at is printed",
    )
    parser.add_argument("--prefix", default="dgt-bridge", help="first topic level")
    parser.add_argument(
        "--client-id",
        default=None,
        help="MQTT client id (default from tournament and round; give two "
        "relays of one round different ids)",
    )
    secure = parser.add_argument_group(
        "broker login and TLS (see config/mosquitto/ and docs/broadcast.md)"
    )
    secure.add_argument("--username", default=None, help="the relay's broker login")
    secure.add_argument(
        "--password-file",
        default=None,
        metavar="FILE",
        help=f"a file holding the password (or set {PASSWORD_ENV}; never on the command line)",
    )
    secure.add_argument(
        "--token-file",
        default=None,
        metavar="FILE",
        help=f"a file holding the relay's console token (or set {TOKEN_ENV}): /arbiter "
        "and its controls, such as New game to show a board's new game held over a "
        "finished one",
    )
    secure.add_argument(
        "--hall-key-file",
        default=None,
        metavar="FILE",
        help=f"a file holding the hall's key (or set {HALL_KEY_ENV}), which only the "
        "relay holds: every board's message must then be signed with that board's key "
        "(--print-board-key), so a board's broker login alone forges nothing",
    )
    secure.add_argument(
        "--print-board-key",
        default=None,
        metavar="N",
        help="print board N's key for --tournament (from --hall-key-file) and exit: "
        "the file board N's Pi names in broadcast.mqtt.board_key_file",
    )
    secure.add_argument(
        "--arbiter-key-file",
        default=None,
        metavar="FILE",
        help="deprecated (every Pi holds it; use --hall-key-file): a file holding the "
        f"daemons' broadcast.mqtt.arbiter_key (or set {ARBITER_KEY_ENV}): only events "
        "signed with it change a result or start a game over a finished one",
    )
    secure.add_argument("--tls", action="store_true", help="TLS to the broker (port 8883)")
    secure.add_argument("--ca", default="", metavar="FILE", help="CA of the broker (implies --tls)")
    secure.add_argument("--cert", default="", metavar="FILE", help="client certificate (PEM)")
    secure.add_argument("--key", default="", metavar="FILE", help="client key (PEM)")
    push = parser.add_argument_group("pushing the round to lichess (docs/broadcast.md)")
    push.add_argument("--lichess-round", default="", metavar="ID",
                      help="the lichess broadcast round's 8-character id")  # fmt: skip
    push.add_argument(
        "--lichess-token-file",
        default=None,
        metavar="FILE",
        help=f"a file holding the study:write token (or set {LICHESS_TOKEN_ENV})",
    )
    push.add_argument(
        "--lichess-url",
        default="https://lichess.org",
        metavar="URL",
        help="the lichess server pushed to (default https://lichess.org; another for a test)",
    )
    parser.set_defaults(func=run)  # fmt: skip


def _secret(path: str | None, option: str, variable: str) -> str | None:
    """A password or token from its file (the option) or its environment variable,
    never from the command line, where ``ps`` shows it to everyone."""
    if not path:
        return os.environ.get(variable) or None
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"{option}: cannot read it: {exc}") from None


def _lichess_settings(args: argparse.Namespace) -> LichessSettings | None:
    if not args.lichess_round:
        return None
    token = _secret(args.lichess_token_file, "--lichess-token-file", LICHESS_TOKEN_ENV)
    settings = LichessSettings(
        enabled=True, round_id=args.lichess_round, token=token, url=args.lichess_url
    )
    problem = settings.problem()
    if problem:
        raise SetupError(problem.replace("lichess.round_id", "--lichess-round").replace(
            "lichess.token", "--lichess-token-file"))  # fmt: skip
    return settings


def _hall_key(args: argparse.Namespace) -> str | None:
    """The hall's key (``boardkeys``), or None; ``SetupError`` for a short one."""
    text = _secret(args.hall_key_file, "--hall-key-file", HALL_KEY_ENV)
    if text is None:
        return None
    try:
        return boardkeys.check_hall_key(text)
    except boardkeys.BoardKeyError as exc:
        raise SetupError(f"--hall-key-file: {exc}") from None


def _print_board_key(args: argparse.Namespace) -> int:
    """Board N's key, for its Pi: ``dgt-bridge relay ... --print-board-key N > F``."""
    hall_key = _hall_key(args)
    if hall_key is None:
        raise SetupError(f"--print-board-key needs the hall's key: --hall-key-file (or "
                         f"{HALL_KEY_ENV})")  # fmt: skip
    board = topic_level(args.print_board_key)
    print(boardkeys.board_key(hall_key, topic_level(args.tournament), board))
    return 0


def _deprecations(args: argparse.Namespace, hall_key: str | None) -> None:
    if not (args.arbiter_key_file or os.environ.get(ARBITER_KEY_ENV)):
        return
    if hall_key is not None:
        print("dgt-bridge relay: --arbiter-key-file is ignored with --hall-key-file "
              "(each board's key signs its messages)", file=sys.stderr)  # fmt: skip
    else:
        print("dgt-bridge relay: --arbiter-key-file is deprecated: every Pi holds that "
              "key, so one stolen Pi signs any board's results; give the relay "
              "--hall-key-file and each board its own key (docs/broadcast.md)",
              file=sys.stderr)  # fmt: skip


def _mqtt_settings(args: argparse.Namespace) -> MqttSettings:
    password = _secret(args.password_file, "--password-file", PASSWORD_ENV)
    return MqttSettings(
        username=args.username,
        password=password,
        tls=args.tls,
        ca_file=args.ca,
        cert_file=args.cert,
        key_file=args.key,
        arbiter_key=_secret(args.arbiter_key_file, "--arbiter-key-file", ARBITER_KEY_ENV),
    )


async def _serve(args: argparse.Namespace) -> None:
    host, port = args.broker
    if args.round is None:
        raise SetupError("the following argument is required: --round")
    hall_key = _hall_key(args)
    _deprecations(args, hall_key)
    relay = Relay(host, port, args.tournament, args.round, address=args.address,
                  port=args.port, prefix=args.prefix, client_id=args.client_id,
                  event=args.event, mqtt_settings=_mqtt_settings(args),
                  lichess=_lichess_settings(args),
                  token=_secret(args.token_file, "--token-file", TOKEN_ENV),
                  hall_key=hall_key)  # fmt: skip
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await relay.start()
    pages = "  ".join(relay.urls)  # every address, not 0.0.0.0 (it serves the network)
    print(
        f"relay: {args.tournament} round {args.round} from {host}:{port}; "
        f"page {pages}  PGN {relay.urls[0]}game.pgn",
        flush=True,
    )
    if hall_key is not None:
        print("relay: only messages signed with their board's key count (--hall-key-file)",
              flush=True)  # fmt: skip
    try:
        await stop.wait()
    finally:
        await relay.stop()


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.print_board_key is not None:
            return _print_board_key(args)
        asyncio.run(_serve(args))
    except OSError as exc:
        print(f"dgt-bridge relay: {exc}", file=sys.stderr)
        return 1
    except (MqttSetupError, SetupError) as exc:
        print(f"dgt-bridge relay: {exc}", file=sys.stderr)
        return 2
    return 0
