"""``dgt-bridge pairings FILE``: a round's pairings name every board's players.

The organiser exports the round from the pairing program (FIDE TRF, or the pairing
list as CSV: Swiss-Manager, Vega) and names all boards in one step instead of typing
each board's players: into the configuration (``--config``: the ``boards:`` list and
``broadcast.round``, read at the daemon's next start) or into the running daemon
(``--send``: one ``players`` control a board, as the console's form sends, so the
page, the live PGN and the journal's PGN take them at once). Without either, it
prints the boards it read, which checks the file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import urllib.error

    from daemon.pairings.files import RoundPairings

PROG = "dgt-bridge pairings"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pairings",
        help="name every board's players and the round from a pairings file (TRF, CSV)",
        description=(
            "Read a round's pairings from a FIDE TRF file or a pairing list exported as CSV "
            "(Swiss-Manager, Vega: a board column and White/Black or two Name columns) and "
            "print them; with --config, write each board's players and the round into the "
            "configuration's boards: list; with --send, give them to the running daemon. "
            "Board N of the pairings is the board whose id is N (see --first-board)."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the pairings: .trf/.txt (TRF) or .csv")
    parser.add_argument(
        "--round", type=int, metavar="N",
        help="which round (default: the TRF's round paired and not played; the CSV's own)",
    )  # fmt: skip
    parser.add_argument(
        "--config", metavar="CONFIG.yaml",
        help="write the players and the round into this configuration file (kept as it is "
        "written, comments too; checked before it is replaced)",
    )  # fmt: skip
    parser.add_argument(
        "--send", metavar="URL",
        help="the running daemon's page (http://pi.local:8080): POST each board's players",
    )  # fmt: skip
    parser.add_argument("--token", help="the arbiter's token (broadcast.token) for --send")
    parser.add_argument("--token-file", metavar="FILE", help="a file holding the token")
    parser.add_argument(
        "--first-board", type=int, default=1, metavar="ID",
        help="the board id of the pairings' board 1 (default 1: board N is id N)",
    )  # fmt: skip
    parser.set_defaults(func=pairings)


def pairings(args: argparse.Namespace) -> int:
    from daemon.pairings.files import PairingsError, read_pairings

    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as error:
        return _fail(f"{args.file}: cannot be read: {error.strerror or error}")
    try:
        read = read_pairings(data, round_number=args.round)
    except PairingsError as error:
        return _fail(f"{args.file}, {error}" if error.line else f"{args.file}: {error}")
    from daemon.pairings.configfile import board_id

    title = f"round {read.round}" + (f" of {read.event}" if read.event else "")
    print(f"{args.file} ({read.kind}): {title}, {len(read.pairings)} boards")
    for pairing in read.pairings:
        print(f"  board {board_id(pairing, args.first_board)}: {pairing.white} - {pairing.black}")
    for name in read.byes:
        print(f"  no board: {name}")
    code = 0
    if args.config:
        code = _write_config(args, read) or code
    if args.send:
        code = _send(args, read) or code
    return code


def _fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2


def _write_config(args: argparse.Namespace, read: RoundPairings) -> int:
    import os
    import tempfile

    from daemon.config import ConfigError, load_text
    from daemon.pairings.configfile import ConfigEditError, name_boards

    target = Path(args.config)
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return _fail(f"{args.config}: cannot be read: {error}")
    try:
        new_text, missing = name_boards(text, read.pairings, read.round,
                                        first_board=args.first_board)  # fmt: skip
    except ConfigEditError as error:
        return _fail(f"{args.config}: {error}")
    try:  # what the daemon will read must still be a valid configuration
        load_text(new_text, str(target), {})
    except ConfigError as error:
        return _fail(f"{args.config} was left as it was: with the players it would be {error}")
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(new_text)
        os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except OSError as error:
        return _fail(f"{args.config}: cannot be written: {error.strerror or error}")
    named = len(read.pairings) - len(missing)
    print(f"{args.config}: {named} boards named, round {read.round} (the daemon reads them "
          "when it starts; --send names them in a running daemon)")  # fmt: skip
    if missing:
        print(f"{PROG}: not in the configuration's boards: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


def _send(args: argparse.Namespace, read: RoundPairings) -> int:
    import urllib.error
    import urllib.parse
    import urllib.request

    from daemon.pairings.configfile import board_id

    token = args.token
    if args.token_file:
        try:
            token = Path(args.token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            return _fail(f"--token-file {args.token_file}: cannot be read: {error}")
    if not token:
        return _fail("--send needs the arbiter's token (--token or --token-file)")
    base = args.send.rstrip("/")
    if not base.startswith(("http://", "https://")):
        return _fail(f"--send {args.send}: give the page's address, http://host:port")
    failed = []
    for pairing in read.pairings:
        board = board_id(pairing, args.first_board)
        body = {"white": pairing.white, "black": pairing.black, "round": read.round}
        request = urllib.request.Request(
            f"{base}/control/players?board={urllib.parse.quote(board)}",
            data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except urllib.error.HTTPError as error:
            reason = _reason(error)
            if error.code in (401, 403, 429):
                return _fail(f"{base} refused the token: {reason}")
            failed.append(f"board {board}: {reason}")
        except (urllib.error.URLError, OSError) as error:
            why = getattr(error, "reason", error)
            return _fail(f"{base} cannot be reached: {why}")
    sent = len(read.pairings) - len(failed)
    print(f"{base}: {sent} boards named, round {read.round}")
    for line in failed:
        print(f"{PROG}: {line}", file=sys.stderr)
    return 1 if failed else 0


def _reason(error: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(error.read()).get("error") or error.reason)
    except (ValueError, OSError, AttributeError):
        return str(error.reason)
