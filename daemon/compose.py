"""The composition root: every part the daemon runs is made here, from ``Settings``.

``run``, ``demo``, ``replay`` and ``record`` all build their rules core, clock
interpreter, link and outputs through these functions, and nowhere else. That is what
makes the README's promise hold: a sensor log replayed gives the feed the daemon gave
live, with the same Appendix E phrasing in each move's ``speech``, the same time
control (6.11), the same clock buttons and the same board orientation.

Imports of the heavier parts (speech engines, the link's pyserial, aiohttp) happen
inside the functions that need them, so ``replay`` does not pay for a web server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TextIO

from daemon.config import Settings
from daemon.lazy import logger
from daemon.rules import RulesCore
from drivers.records import Record
from drivers.sensors import BoardDump, MagicPiece, SensorEvent, SquareChange

if TYPE_CHECKING:
    from daemon.clock.sides import SideMapper
    from daemon.game.record import GameHeaders, GameRecord
    from daemon.speech.announcer import Announcer, AnnouncerGroup
    from daemon.speech.phoneline import PhoneLine
    from daemon.speech.settings import SynthesisSeat
    from daemon.speech.speechfirst import SpeechFirst
    from daemon.speech.vocabulary import Vocabulary
    from drivers.clock.dgt3000 import ClockWriter, DgtClockInterpreter
    from drivers.dgt.link import BoardLink


#: The board's id when the configuration names none (no broadcast section).
DEFAULT_BOARD_ID = "1"


def configured_board_id(settings: Settings) -> str:
    """The id this daemon's board has in URLs, MQTT topics and ``/game.pgn``: the first
    of ``broadcast.boards`` (a hall gives each daemon its own), else "1"."""
    boards = getattr(settings.broadcast, "boards", None)
    return boards[0].id if boards else DEFAULT_BOARD_ID


# --- the rules side: what decides the feed ---------------------------------------------------


def load_vocabulary(settings: Settings) -> Vocabulary:
    """The configured vocabulary, read once for every part that speaks or phrases."""
    from daemon.speech.vocabulary import vocabulary_of

    return vocabulary_of(settings.speech)


def build_core(settings: Settings, vocabulary: Vocabulary | None = None) -> RulesCore:
    """The rules core, with the speech's Appendix E phrasing for the Move events'
    ``speech`` field, the clock section's time control (6.11: both flags in the last
    period) and what the clock buttons ask for."""
    from daemon.speech.phrases import make_describer

    speech = settings.speech
    vocabulary = vocabulary if vocabulary is not None else load_vocabulary(settings)
    describer = make_describer(vocabulary, form=speech.form, say_pawn=speech.say_pawn)
    clock = settings.clock
    rules = replace(
        settings.rules,
        describe_move=describer,
        time_control=clock.parsed_time_control,
        report_touches=bool(speech.tell_touches) or settings.rules.report_touches,
    )
    if clock.device == "none":
        rules = replace(rules, use_clock=False)
    if clock.button_actions:
        actions = {b: a for b, a in clock.button_actions.items() if a != "none"}
        rules = replace(rules, button_actions=actions)
    return RulesCore(rules)


def build_orientation(settings: Settings) -> Callable[[SensorEvent], SensorEvent]:
    """How sensor squares map to true squares: turned round for ``board.orientation:
    flipped``, as they are otherwise (the core recognises a turned start itself)."""
    if settings.board.orientation == "flipped":
        return turned_round
    return _as_is


def _as_is(event: SensorEvent) -> SensorEvent:
    return event


def turned_round(event: SensorEvent) -> SensorEvent:
    """A board configured as standing turned by 180 degrees (``board.orientation:
    flipped``): its sensors' a1 is the true h8. Mapped here, in the shell, so the rules
    core sees a board the right way round (it still recognises a turned start itself
    with ``auto``)."""
    import chess

    if isinstance(event, SquareChange | MagicPiece):
        return replace(event, square=chess.square_name(63 - chess.parse_square(event.square)))
    if isinstance(event, BoardDump):

        def turn(placement: str) -> str:
            board = chess.BaseBoard(placement).transform(chess.flip_vertical)
            return board.transform(chess.flip_horizontal).board_fen()

        history = tuple(turn(p) for p in event.history)
        return replace(event, placement=turn(event.placement), history=history)
    return event


@dataclass(eq=False, repr=False)
class BoardParts(Record):
    """What one board's pipeline is made of, before anything runs. The clock's
    driver (``clock_interpreter``) reads left and right; ``clock_sides`` decides
    whose side is whose and makes the core's ClockReports (``daemon.clock.sides``)."""

    core: RulesCore
    orient: Callable[[SensorEvent], SensorEvent]
    clock_interpreter: DgtClockInterpreter | None
    clock_writer: ClockWriter | None
    clock_sides: SideMapper | None = None


def build_board_parts(
    settings: Settings, vocabulary: Vocabulary | None = None, *, clock: bool = True
) -> BoardParts:
    """The rules core, orientation and clock parts of one board, from its settings.

    ``clock`` False leaves out the DGT clock's interpreter and display: a replay of a
    sensor log has the clock's readings already made (and shows nothing on a clock);
    it still decides whose side is whose, as the daemon did."""
    core = build_core(settings, vocabulary)
    interpreter = build_clock_interpreter(settings) if clock else None
    return BoardParts(
        core=core,
        orient=build_orientation(settings),
        clock_interpreter=interpreter,
        clock_writer=build_clock_writer(settings) if clock else None,
        clock_sides=build_clock_sides(settings, core, interpreter),
    )


def build_clock_sides(
    settings: Settings, core: RulesCore, interpreter: DgtClockInterpreter | None
) -> SideMapper | None:
    """Whose clock side is whose (``clock.sides``), learnt from the presses the board
    (the core) explains; it tells the clock's driver a game's start and a resumed
    game's presses. None without a clock (``clock.device: none``): its readings are
    not the game's."""
    if settings.clock.device == "none":
        return None
    from daemon.clock.sides import SideMapper

    return SideMapper(settings.clock.sides, core, interpreter)


# --- the board side: link and clock -----------------------------------------------------------


def build_clock_interpreter(settings: Settings) -> DgtClockInterpreter | None:
    """The DGT clock's BWTIME interpreter (its filters know the time control), or None
    when the clock is not a DGT clock on the board (the link then reads times as
    they come)."""
    clock = settings.clock
    if clock.device != "dgt":
        return None
    from drivers.clock.dgt3000 import DgtClockInterpreter

    return DgtClockInterpreter(clock.parsed_time_control)


def build_clock_writer(settings: Settings) -> ClockWriter | None:
    """What the daemon shows on a DGT clock's display, or None without one."""
    clock = settings.clock
    if clock.device != "dgt":
        return None
    from drivers.clock.dgt3000 import ClockWriter

    return ClockWriter(
        time_control=clock.parsed_time_control,
        show_moves=clock.show_moves_on_clock,
        set_and_run_at_start=clock.set_and_run_at_start,
    )


def board_port(settings: Settings, override: str | None = None) -> str | None:
    """The serial port to open: ``override`` (``--port``), else ``board.port``; None
    means auto-detect."""
    port = override or settings.board.port
    return None if port in (None, "", "auto") else port


def build_link(
    settings: Settings,
    on_event: Callable[[SensorEvent], None],
    *,
    port: str | None = None,
    clock_interpreter: DgtClockInterpreter | None = None,
    time_source: Callable[[], float] | None = None,
) -> BoardLink:
    """The board's serial link. Pass the pipeline's own clock interpreter (the daemon
    tells it about resumed games); without one, a fresh one from the settings."""
    from drivers.dgt.link import BoardLink

    if clock_interpreter is None:
        clock_interpreter = build_clock_interpreter(settings)
    return BoardLink(
        board_port(settings, port),
        on_event,
        clock_interpreter=clock_interpreter,
        time_source=time_source,
    )


# --- the outputs ---------------------------------------------------------------------------------


#: The PGN tags of the tournament, named once in ``broadcast:`` (``game:``'s keys of the
#: same names are deprecated: still read where ``broadcast:`` leaves them "?").
TOURNAMENT_KEYS = ("event", "site", "round")


def tournament_value(settings: Settings, key: str) -> str:
    """``broadcast.<key>`` where set, else the deprecated ``game.<key>``, else "?": the
    one rule the page, the journal's PGN on disk, MQTT and lichess all read by."""
    broadcast = getattr(settings.broadcast, key, "?")
    if broadcast not in ("?", "", None):
        return str(broadcast)
    game = getattr(settings.game, key, "?")
    return str(game) if game not in ("", None) else "?"


def build_headers(settings: Settings, board_id: str | None = None) -> GameHeaders:
    """The PGN headers of one board's games on disk: Event, Site, Date and Round as the
    page has them (``broadcast:``, the board's card's own round first), the players of
    ``game:`` (the board's own, see ``daemon.boards.board.board_settings``) and a ``Board`` tag,
    so a game's file on disk and ``/game.pgn`` say the same (issue 29)."""
    from daemon.game.record import GameHeaders, today_pgn_date

    game = settings.game
    board = board_id or configured_board_id(settings)
    cards = getattr(settings.broadcast, "boards", None) or []
    card = next((c for c in cards if getattr(c, "id", None) == board), None)
    round_ = getattr(card, "round", "") or tournament_value(settings, "round")
    return GameHeaders(
        event=tournament_value(settings, "event"),
        site=tournament_value(settings, "site"),
        date=getattr(settings.broadcast, "date", "") or today_pgn_date(),
        round=round_,
        white=game.white,
        black=game.black,
        extra={"Board": board},
    )


def build_announcer(
    settings: Settings,
    vocabulary: Vocabulary,
    on_problem: Callable[[str], None] | None = None,
    text_stream: TextIO | None = None,
    on_outcome: Callable[[dict[str, Any]], None] | None = None,
    seat: SynthesisSeat | None = None,
    phones: dict[str, PhoneLine] | None = None,
    record: GameRecord | None = None,
    speech_first: SpeechFirst | None = None,
) -> Announcer | AnnouncerGroup | None:
    """The speech part's announcer (one per player's earphone when ``speech.outputs``
    names them; engines not yet started), or None (logged) when it cannot be made.

    ``text_stream`` is where the text engine (the last fallback) writes: never the
    stdout that carries the JSON event feed; ``on_outcome`` gets each ``speech``
    record (heard, cut, dropped) for the journal; ``seat``: who in this process
    has the synthesis thread already (``SynthesisSeat``; the hall's for its boards);
    ``phones``: the players' lines to their phone pages (side -> ``PhoneLine``), each
    spoken by an announcer of its own beside the earphones (``daemon.speech.phone``);
    ``record``: the board's one game record, which the announcers read (not fold);
    ``speech_first``: the daemon's gate a move's phrase holds until its first sound,
    while the page and MQTT wait (``daemon.speech.speechfirst``)."""
    try:
        from daemon.speech.announcer import AnnouncerGroup, build_announcers

        announcer = build_announcers(
            settings.speech,
            vocabulary,
            on_problem=on_problem,
            text_stream=text_stream,
            on_outcome=on_outcome,
            seat=seat,
            record=record,
            speech_first=speech_first,
        )
    except Exception as exc:  # the game goes on unspoken, and says so
        logger().error("SPEECH NOT AVAILABLE: %s (moves are only logged)", exc)
        return None
    if not phones:
        return announcer
    from daemon.speech.phone import build_phone_announcers

    members = announcer.announcers if isinstance(announcer, AnnouncerGroup) else [announcer]
    on_phones = build_phone_announcers(
        settings.speech, vocabulary, phones, on_outcome=on_outcome, record=record
    )
    return AnnouncerGroup([*members, *on_phones])


def import_after_ready(speech: bool, broadcast: bool) -> None:
    """Imports what the daemon needs only after READY, so that it can do it in a
    thread while the board is read: the announcer and its engines (``speech``), the
    live page's server (``broadcast``: aiohttp, a third of the start-up's CPU), and
    python-chess's PGN writer (for the first move's PGN, which ``import chess``
    alone does not bring)."""
    import chess.pgn  # noqa: F401

    if speech:
        from daemon.speech import announcer  # noqa: F401
    if broadcast:
        from daemon.broadcast import server  # noqa: F401


async def start_broadcast(
    settings: Settings,
    on_request: Callable[[str, Any], None],
    now: Callable[[], float],
    notifier: Any = None,
    phone_lines: Callable[[str, str], Any] | None = None,
    phone_speech: dict[str, Any] | None = None,
) -> tuple[Any, str | None]:
    """The broadcast part's Broadcaster, started (or None when disabled or missing);
    ``phone_lines``: (board, side) -> the player's ``PhoneLine``, for his phone page."""
    broadcast = settings.broadcast
    if not broadcast.enabled:
        return None, None
    from daemon.broadcast import Broadcaster  # aiohttp only when the page is wanted

    _fill_broadcast_headers(broadcast, settings.game)
    broadcaster = Broadcaster(
        broadcast,
        on_request,
        now=now,
        notifier=notifier,
        phone_lines=phone_lines,
        phone_speech=phone_speech,
        board_keys=settings.board_keys,
    )
    try:
        await broadcaster.start()
    except (OSError, ValueError) as exc:  # a port taken, a TLS file that cannot be read
        logger().error(
            "LIVE PAGE NOT AVAILABLE: cannot listen on %s:%s: %s (the game goes on)",
            broadcast.address,
            broadcast.port,
            exc,
        )
        return None, None
    # The first URL is on the network when the page is served to it (0.0.0.0), so
    # what is printed says who can see the page; the broadcaster logs them all.
    return broadcaster, broadcaster.urls[0]


def _fill_broadcast_headers(broadcast: Any, game: Any) -> None:
    """The ``game:`` section names the players of a single board; its event, site and
    round (deprecated: ``broadcast:`` names them) are read where the broadcast's own
    keys are "?", by the same rule as the journal's (``tournament_value``)."""
    for key in TOURNAMENT_KEYS:
        if getattr(broadcast, key, "?") in ("?", "") and getattr(game, key) not in ("?", ""):
            setattr(broadcast, key, getattr(game, key))
    boards = getattr(broadcast, "boards", None)
    if boards:
        for key in ("white", "black"):
            if getattr(boards[0], key, "?") in ("?", "") and getattr(game, key) not in ("?", ""):
                setattr(boards[0], key, getattr(game, key))
