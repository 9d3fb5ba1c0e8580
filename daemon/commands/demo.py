"""``dgt-bridge demo``: an emulated board plays a real game; the daemon reads it.

The first command a new user runs, so it must work on a bare machine: no config file
(the shipped defaults), no sound card (moves are printed, with one line saying how to
get speech), no shared material (the games ship in ``config/games/``). The emulator
sits on a pseudo-terminal and the daemon reads it through the same serial link as a
real board; nothing is short-circuited, so the demo also shows that the whole chain
works on this machine.

The game is played as human hands would play it (``drivers.simulators.handling``), with a clock
press after each move, plus two irregularities made on purpose: an illegal move that
is pressed and then taken back (7.4), and a piece of the side not on move knocked
off its square and put back (7.3).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from daemon.commands._waiting import play_then_serve, wait_until
from daemon.files import resources
from daemon.game.events import DomainEvent, GameEnd, GameStart, Move
from drivers.records import Record

#: The plies before which the demo's irregularities happen (if the game is that long).
ILLEGAL_MOVE_BEFORE_PLY = 6
KNOCKED_PIECE_BEFORE_PLY = 11
#: The emulated clock's time control (minutes, seconds per move): the daemon is told
#: it, as an arbiter configures the clock he set.
CLOCK_MINUTES = 90
CLOCK_INCREMENT = 30


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="an emulated DGT board plays a real game; the daemon reads, speaks and shows it",
        description=(
            "Start the board emulator on a pseudo-terminal and the daemon against it. The "
            "emulator plays a public-domain game as a human would (with an illegal move "
            "taken back and a knocked piece put back); the daemon speaks the moves (or "
            "prints them) and serves the live page. Without --once, the page keeps being "
            "served after the game until Ctrl-C. With --boards N: a hall of N boards on one "
            "emulated DGT bus chain, each playing its own game, for the wall screen."
        ),
    )
    parser.add_argument(
        "--once", action="store_true", help="exit after the game (0: every move recognised)"
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=None,
        help="how many times faster than real hands (default 2, a hall 1; the rules decide "
        "in game time)",
    )
    parser.add_argument(
        "--game", type=int, default=1, metavar="N", help="which shipped game (1-based; default 1)"
    )
    parser.add_argument("--no-speech", action="store_true", help="print the moves, do not speak")
    parser.add_argument(
        "--port",
        type=tcp_port,
        default=8080,
        help="HTTP port of the live page (0: any free port)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the human-hands model")
    parser.add_argument(
        "--boards", type=int, metavar="N",
        help="a hall: N boards (2 to 64) on one emulated DGT bus chain, each playing a "
        "shipped game (--game: the first board's), read by the daemon; watch them all on "
        "the wall screen (the page's address with ?wall=fit)",
    )  # fmt: skip
    parser.add_argument(
        "--half-moves", type=int, metavar="N",
        help="play only the first N half-moves of each game (a short show)",
    )  # fmt: skip
    parser.set_defaults(func=demo)


def tcp_port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port is 0 to 65535, not {port}")
    return port


@dataclass(eq=False, repr=False)
class DemoGame(Record):
    game: chess.pgn.Game
    number: int
    count: int

    @property
    def moves(self) -> list[chess.Move]:
        return list(self.game.mainline_moves())

    @property
    def title(self) -> str:
        """``White - Black, Event, Site Year``, leaving out what the PGN does not know."""
        h = self.game.headers
        year = h.get("Date", "")[:4].strip("?")
        where = [h.get(k, "?") for k in ("Event", "Site")]
        place = ", ".join(w for w in where if w and w != "?")
        if year and year not in place:
            place = f"{place} {year}".strip()
        return f"{h.get('White', '?')} - {h.get('Black', '?')}, {place}".rstrip(", ")


def load_demo_game(number: int) -> DemoGame:
    """Game ``number`` (1-based) of the shipped demo games; ValueError names the range."""
    text = resources.demo_games_file().read_text(encoding="utf-8")
    games = []
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    if not 1 <= number <= len(games):
        raise ValueError(f"--game must be between 1 and {len(games)}")
    return DemoGame(games[number - 1], number, len(games))


def demo_sensor_log(game: chess.pgn.Game, seed: int) -> list[Any]:
    """The game as human hands play it on a board with a clock, with two irregularities."""
    from drivers.simulators.handling import ALL, Hands

    hands = Hands(
        game.board(),
        seed=seed,
        with_clock=True,
        clock_seconds=CLOCK_MINUTES * 60.0,
        increment=float(CLOCK_INCREMENT),
    )
    for ply, move in enumerate(game.mainline_moves(), 1):
        hands.think()
        if ply == ILLEGAL_MOVE_BEFORE_PLY:
            _illegal_move_taken_back(hands, move.from_square)
        if ply == KNOCKED_PIECE_BEFORE_PLY:
            _piece_knocked_and_put_back(hands)
        hands.play(move, ALL)
        hands.wait(hands.rng.uniform(*hands.timing.before_press))
        hands.press()
    hands.wait(1.0)
    return hands.events


def _illegal_move_taken_back(hands: Any, square: chess.Square) -> None:
    """The piece about to move is first set on a square it cannot reach and the clock
    pressed (7.4a); it is put back, the arbiter gives the player his clock back, and
    the player then moves that same piece (the touched piece, 4.3)."""
    board: chess.Board = hands.board
    legal = {m.to_square for m in board.legal_moves if m.from_square == square}
    candidates = [
        (chess.square_distance(square, target), target)
        for target in chess.SQUARES
        if board.piece_at(target) is None
        and target not in legal
        and target != square
        and chess.square_rank(target) not in (0, 7)
    ]
    if not candidates:
        return
    _, target = min(candidates)
    mover = hands.running
    piece = hands.lift(square)
    hands.step()
    hands.put(target, piece)
    hands.wait(0.6)
    hands.press()
    hands.wait(3.0)  # the arbiter stops the clock and points at the board
    hands.lift(target)
    hands.step()
    hands.put(square, piece)
    hands.wait(1.5)
    hands.running = mover
    hands.clock_report()
    hands.wait(1.0)


def _piece_knocked_and_put_back(hands: Any) -> None:
    """A sleeve knocks a piece of the side not on move to a neighbouring square (7.3);
    it stands there a few seconds before it is put back."""
    board: chess.Board = hands.board
    # Not a piece the player on move could capture: lifting that one could be his touch
    # (4.3b), and this is a sleeve, not a decision.
    capturable = {m.to_square for m in board.legal_moves if board.is_capture(m)}
    for square, piece in sorted(board.piece_map().items()):
        if piece.color == board.turn or piece.piece_type == chess.KING or square in capturable:
            continue
        neighbour = hands._neighbour_empty(square)
        if neighbour is None:
            continue
        symbol = hands.lift(square)
        hands.step()
        hands.put(neighbour, symbol)
        hands.wait(3.0)
        hands.lift(neighbour)
        hands.step()
        hands.put(square, symbol)
        hands.wait(1.5)
        return


def _port_free(address: str, port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError:
            return False
    return True


def speech_available() -> tuple[bool, str]:
    """Whether this machine can speak at all, and if not what to do about it."""
    try:
        from daemon.speech.engines import pyttsx3_available
    except ImportError:
        return False, "speech is not part of this installation"
    if not (pyttsx3_available() or shutil.which("espeak-ng")):
        return False, "no speech engine: to hear the moves, sudo apt install espeak-ng"
    if shutil.which("aplay") is None:
        return False, "no sound player: to hear the moves, sudo apt install alsa-utils"
    if sys.platform.startswith("linux"):
        cards = Path("/proc/asound/cards")
        text = cards.read_text(errors="replace") if cards.exists() else ""
        if "no soundcards" in text or not text.strip():
            return False, "no sound card found: the moves are printed (plug one in to hear them)"
    return True, ""


def demo(args: argparse.Namespace) -> int:
    if args.speed is None:  # a hall at the players' own pace (docs/daemon.md, the hall demo)
        args.speed = 1.0 if args.boards is not None else 2.0
    if args.speed <= 0:
        print("dgt-bridge demo: --speed must be positive", file=sys.stderr)
        return 2
    from daemon.commands._demohall import MAX_BOARDS

    if args.boards is not None and not 2 <= args.boards <= MAX_BOARDS:
        print(f"dgt-bridge demo: --boards is 2 to {MAX_BOARDS} (a DGT bus chain's boards); "
              "without it, the demo plays one board", file=sys.stderr)  # fmt: skip
        return 2
    if args.half_moves is not None and args.half_moves < 1:
        print("dgt-bridge demo: --half-moves must be 1 or more", file=sys.stderr)
        return 2
    try:
        chosen = load_demo_game(args.game)
    except (ValueError, OSError) as exc:
        print(f"dgt-bridge demo: {exc}", file=sys.stderr)
        return 2
    if args.half_moves is not None:
        chosen = replace(chosen, game=_first_half_moves(chosen.game, args.half_moves))
    try:
        if args.boards is not None:
            return asyncio.run(_hall(args))
        return asyncio.run(_demo(args, chosen))
    except KeyboardInterrupt:
        return 130


def _first_half_moves(game: chess.pgn.Game, count: int) -> chess.pgn.Game:
    """The game's first ``count`` half-moves, its headers kept (its result not: the
    game is not over)."""
    short = chess.pgn.Game()
    short.headers.update(game.headers)
    short.headers["Result"] = "*"
    node: chess.pgn.GameNode = short
    for move in list(game.mainline_moves())[:count]:
        node = node.add_variation(move)
    return short


async def _hall(args: argparse.Namespace) -> int:
    """``--boards N``: the hall demo (``daemon/commands/_demohall.py``)."""
    from daemon.app import setup_logging
    from daemon.commands._demohall import run_hall

    setup_logging(sys.stderr)
    import logging

    logging.getLogger().setLevel(logging.WARNING)
    port = args.port
    if port and not _port_free("0.0.0.0", port):
        print(f"dgt-bridge demo: port {port} is taken; the page gets a free one", flush=True)
        port = 0
    stop = _StopOnSignal(None)
    code = await run_hall(args, port, stop)
    if stop.signal is not None:
        print(f"dgt-bridge demo: stopped ({stop.signal}).", file=sys.stderr, flush=True)
        return 130 if stop.signal == "SIGINT" else 0
    return code


class _Printer:
    """The demo's transcript on stdout: each move with its Appendix E words; each
    other event as it is spoken (the vocabulary's words, German by default) and, below
    it, in plain words of the terminal's language; the board's orientation at the
    start. Codes such as ``illegal_move (7.4)`` stay in the log."""

    #: What the transcript shows (clock times and the like only in the log).
    SHOWN = ("move", "irregularity", "position_restored", "game_end", "notice", "game_start")

    def __init__(self) -> None:
        self.moves: dict[int, str] = {}
        self.ended: GameEnd | None = None
        self.changed = asyncio.Event()
        self.spoken: Any = None  # the daemon's vocabulary (what the player hears)
        self.plain: Any = None  # the terminal's language, when it is another
        self._fen = chess.STARTING_FEN

    def use(self, spoken: Any) -> None:
        """Speak as the daemon does; explain in the terminal's language."""
        from daemon.speech.vocabulary import load_vocabulary

        self.spoken = spoken
        plain = terminal_vocabulary()
        if plain is not None and plain != getattr(spoken, "name", None):
            with contextlib.suppress(Exception):
                self.plain = load_vocabulary(plain)

    def receive(self, event: DomainEvent) -> None:
        """One event of the demo board's game (an output of its pipeline)."""
        match event:
            case Move(ply=ply, uci=uci):
                self.moves = {p: u for p, u in self.moves.items() if p < ply}
                self.moves[ply] = uci
            case GameEnd():
                self.ended = event
        if event.type in self.SHOWN:
            for line in self.lines(event):
                print(f"  {line}", flush=True)
        if isinstance(event, Move | GameStart) and event.fen:
            self._fen = event.fen
        self.changed.set()

    def lines(self, event: DomainEvent) -> list[str]:
        from daemon.game.formatting import describe

        if isinstance(event, Move) or self.spoken is None:
            return [describe(event)]
        board = chess.Board(self._fen)
        data = event.to_dict()  # the speech's texts read the feed's fields
        said = _said(data, self.spoken, board)
        plain = _said(data, self.plain, board) if self.plain is not None else None
        mark = "!!" if event.type == "irregularity" else "**"
        lines = [f"{mark} {said or describe(event)}"]
        if plain and plain != said:
            lines.append(f"   ({plain})")
        if isinstance(event, GameStart):
            lines.append("   " + orientation_line(event.flipped))
        return lines


def _said(event: dict[str, Any], vocabulary: Any, board: chess.Board) -> str | None:
    from daemon.speech.messages import event_text

    try:
        return event_text(event, vocabulary, board, board)
    except Exception:  # a transcript line must never stop the demo
        return None


def orientation_line(flipped: bool) -> str:
    """How the board stands, in words a newcomer checks against the table."""
    if flipped:
        return (
            "the board stands turned round: Black's pieces on the side of its cable "
            "(the daemon reads it the right way round, 7.1)"
        )
    return "the board stands the normal way: White's pieces on the side of its cable"


def terminal_vocabulary(environ: Any = None) -> str | None:
    """The shipped vocabulary in the terminal's language (LC_ALL, LC_MESSAGES, LANG):
    German terminals read the Appendix E words themselves, so none; English otherwise."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value and value not in ("C", "POSIX") and not value.startswith("C."):
            language = value[:2].lower()
            return {"de": None, "es": "es"}.get(language, "en")
    return "en"


async def _demo(args: argparse.Namespace, chosen: DemoGame) -> int:
    from daemon.app import Daemon, setup_logging
    from daemon.compose import configured_board_id
    from daemon.config import ConfigError, load_file
    from drivers.simulators.emulator import BoardEmulator

    try:
        settings = load_file(resources.default_config_file(), os.environ)
    except ConfigError as exc:
        print(f"dgt-bridge demo: configuration error: {exc}", file=sys.stderr)
        return 2
    port = args.port
    if port and not _port_free(settings.broadcast.address, port):
        print(f"dgt-bridge demo: port {port} is taken; the page gets a free one", flush=True)
        port = 0
    settings.broadcast = replace(settings.broadcast, port=port)
    settings.clock = replace(settings.clock, time_control=f"{CLOCK_MINUTES}+{CLOCK_INCREMENT}")
    settings.game = replace(
        settings.game,
        event=chosen.game.headers.get("Event", "?"),
        site=chosen.game.headers.get("Site", "?"),
        round=chosen.game.headers.get("Round", "?"),
        white=chosen.game.headers.get("White", "?"),
        black=chosen.game.headers.get("Black", "?"),
    )
    speak = not args.no_speech
    if speak:
        speak, why = speech_available()
        if not speak:
            print(f"dgt-bridge demo: {why}", flush=True)
    setup_logging(sys.stderr)
    import logging

    logging.getLogger().setLevel(logging.WARNING)

    storage = Path(tempfile.mkdtemp(prefix="dgt-bridge-demo-"))
    moves = chosen.moves
    log_events = demo_sensor_log(chosen.game, args.seed)
    printer = _Printer()
    print(
        f"dgt-bridge demo: game {chosen.number} of {chosen.count}: {chosen.title}, "
        f"{len(moves)} half-moves, speed x{args.speed:g}",
        flush=True,
    )
    emulator = BoardEmulator().start()
    # The transcript below prints every move; a speech engine falling back to text
    # would only print them twice.
    quiet = io.StringIO()
    daemon = Daemon(
        settings,
        port=emulator.port_path,
        speech=speak,
        speech_text=quiet,
        time_scale=args.speed,
        storage_dir=storage,
        resume=False,
        outputs={configured_board_id(settings): printer},
    )
    printer.use(daemon.vocabulary)
    stop = _StopOnSignal(daemon)
    code = 0
    try:
        await daemon.start()
        stop.install()  # after the daemon's own handlers: the demo decides how to end
        if daemon.http_url:
            print(f"dgt-bridge demo: live page at {daemon.http_url}", flush=True)
        game = asyncio.create_task(_play(args, chosen, daemon, emulator, printer, log_events))
        code = await play_then_serve(daemon, game, args.once, daemon.http_url or "(no live page)")
    finally:
        daemon.stop()
        await daemon.close(drain_speech=stop.signal is None)
        emulator.stop()
    if stop.signal is not None:
        print(f"dgt-bridge demo: stopped ({stop.signal}).", file=sys.stderr, flush=True)
        return 130 if stop.signal == "SIGINT" else 0
    return code


class _StopOnSignal:
    """Ctrl-C (SIGINT) or SIGTERM stops the demo at once, mid-game or after it: the
    game is abandoned, nothing queued is still said, and every part is closed."""

    def __init__(self, daemon: Any) -> None:
        self.daemon = daemon
        self.signal: str | None = None

    def install(self) -> None:
        import signal

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._received, sig.name)

    def _received(self, name: str) -> None:
        self.signal = self.signal or name
        self.daemon.stop()


async def _play(
    args: argparse.Namespace,
    chosen: DemoGame,
    daemon: Any,
    emulator: Any,
    printer: _Printer,
    log_events: list[Any],
) -> int:
    """The game on the emulated board, start to end: 0 when every move was recognised."""
    from drivers.sensors import Request

    connected = await wait_until(printer.changed, lambda: daemon.link.connected, 30)
    if not connected:
        print("dgt-bridge demo: the daemon did not connect to the emulator", file=sys.stderr)
        return 1
    emulator.play(log_events, speed=args.speed)
    duration = (log_events[-1].t - log_events[0].t) / args.speed
    loop = asyncio.get_running_loop()
    deadline = loop.time() + duration + 60
    # Polled, not waited on in a thread: a thread blocked in wait_played would hold
    # the interpreter's exit after Ctrl-C until the game's end.
    while not emulator.wait_played(0) and loop.time() < deadline:
        await asyncio.sleep(0.1)
    moves = chosen.moves
    played = [m.uci() for m in moves]
    await wait_until(
        printer.changed, lambda: len(printer.moves) >= len(played) or printer.ended, 10
    )
    if printer.ended is None:
        result = chosen.game.headers.get("Result", "*")
        if result in ("1-0", "0-1", "1/2-1/2"):
            daemon.submit(Request(daemon.now(), "result", {"result": result}))
    recognised = [printer.moves[p] for p in sorted(printer.moves)]
    code = 0
    if recognised == played:
        print(f"dgt-bridge demo: all {len(played)} half-moves recognised.", flush=True)
    else:
        code = 1
        print(
            f"dgt-bridge demo: MISMATCH: {len(recognised)} recognised of {len(played)}",
            file=sys.stderr,
        )
    pgn = daemon.journal.pgn_path
    storage = daemon.storage_dir
    print(f"dgt-bridge demo: journal and PGN in {storage}" + (f" ({pgn.name})" if pgn else ""))
    return code
