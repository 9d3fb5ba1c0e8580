"""The DGT XL / DGT 3000 clock plugged into the e-board: reading and writing.

Reading: :class:`DgtClockInterpreter` is the board link's ``clock_interpreter``.
The link decodes every BWTIME message (``drivers.dgt.protocol``) and hands it
here; this turns it into ``ClockReading`` and ``ButtonPress`` sensor events, as
defensively as real clocks demand (``dgtbrd.h``'s notes and picochess's
experience, see the shared protocol notes 1.8):

- all-zero messages are ignored (Bluetooth boards send them after a command);
- times out of range (hours above 9, minutes or seconds above 59) are ignored;
- while the "no clock connected" bit is set the last good times are kept, and a
  clock unplugged while running is reported stopped, once;
- a time that jumps up is ignored unless the clock is being set or it is the
  increment of a press (``drivers.clock.tracker``).

It reports what the clock knows, left and right: the times, the flags, which side
runs (a press is the running side changing). Whose side is whose is a decision
about the game, made by the daemon (``daemon.clock.sides``), which tells this
interpreter a game's start and a resumed game's presses in the clock's terms.

Writing: :class:`ClockWriter` turns what the daemon wants shown into the clock
command frames to send: the move just made as text, and the time control at the
start of a game (on the side the daemon says is White's). It is pure; the link
sends the frames one at a time, each waiting for its ack.
"""

from __future__ import annotations

from typing import Literal

from drivers.clock.tracker import CONFIRMATIONS, ClockTracker, RawReading
from drivers.dgt import protocol
from drivers.dgt.protocol import ClockAck, ClockSideTime, ClockTimes
from drivers.sensors import ButtonPress, SensorEvent, Side
from drivers.timecontrol import TimeControl

ClockModel = Literal["dgt3000", "xl"]

#: The longest time a DGT clock can show.
MAX_CLOCK_SECONDS = 9 * 3600 + 59 * 60 + 59


def side_in_range(side: ClockSideTime) -> bool:
    """A DGT clock shows 0:00:00 to 9:59:59; anything else is a corrupt message."""
    return 0 <= side.hours <= 9 and 0 <= side.minutes <= 59 and 0 <= side.seconds <= 59


def running_side(msg: ClockTimes) -> Side | None:
    """Whose time runs: the turn bits when they agree with each other, else the lever.

    On a real clock (the capture ``dgt-capture-1``) status bit 3 is set while
    the left time counts and bit 4 with the lever's right side up while the
    right time counts. When the clock is stopped nobody's time runs.
    """
    if not msg.running:
        return None
    if msg.left_to_move != msg.right_to_move:
        return "left" if msg.left_to_move else "right"
    return "right" if msg.lever_right_high else "left"


def reading_from_times(msg: ClockTimes) -> RawReading:
    return RawReading(
        left=float(msg.left.total_seconds),
        right=float(msg.right.total_seconds),
        running=running_side(msg),
        left_flag=msg.left.flag_fallen or msg.left.flag_shown,
        right_flag=msg.right.flag_fallen or msg.right.flag_shown,
        per_move_indicator=msg.left.time_per_move or msg.right.time_per_move,
    )


class DgtClockInterpreter:
    """BWTIME (times and acks) in, ClockReading and ButtonPress sensor events out.

    Plug it into the board link (``BoardLink(clock_interpreter=...)``). Tell it
    :meth:`new_game` at each game start and :meth:`count_presses` for a resumed
    game; the clock's own acks of a set-and-run tell it that the times may go up.
    """

    def __init__(
        self,
        time_control: TimeControl | None = None,
        confirmations: int = CONFIRMATIONS,
    ) -> None:
        self.tracker = ClockTracker(time_control, confirmations)
        self.clock_connected: bool | None = None  # None until a clock message came
        self.version: tuple[int, int] | None = None
        self.ignored: dict[str, int] = {"all_zero": 0, "out_of_range": 0, "no_clock": 0}

    @property
    def model(self) -> ClockModel | None:
        """``dgt3000`` or ``xl`` once the clock told its version (major 2 = DGT 3000)."""
        if self.version is None:
            return None
        return "dgt3000" if self.version[0] == 2 else "xl"

    def new_game(self) -> None:
        """A new game: presses counted from zero, the increment learnt again."""
        self.tracker.new_game()

    def count_presses(self, left: int, right: int) -> None:
        """A game resumed after a restart: each side's presses so far (the time
        control's periods fall at the right press)."""
        self.tracker.count_presses(left, right)

    def clock_being_set(self) -> None:
        self.tracker.clock_being_set()

    def interpret(self, t: float, msg: ClockTimes | ClockAck) -> list[SensorEvent]:
        """One decoded BWTIME: the sensor events it makes (a reading when the clock
        shows anything new, a button press), or none."""
        if isinstance(msg, ClockAck):
            return self._ack(t, msg)
        if not any(msg.raw):
            self.ignored["all_zero"] += 1
            return []
        if msg.no_clock:
            # The times mean nothing; keep the last good ones. A clock unplugged
            # mid-game runs nobody's time: reported stopped once, so the rules core
            # decides moves on the settle time instead of waiting for presses that
            # can no longer come.
            self.ignored["no_clock"] += 1
            was_connected, self.clock_connected = self.clock_connected, False
            return list(self.tracker.clock_lost(t)) if was_connected else []
        if not (side_in_range(msg.left) and side_in_range(msg.right)):
            self.ignored["out_of_range"] += 1
            return []
        self.clock_connected = True
        return list(self.tracker.check(t, reading_from_times(msg)))

    def _ack(self, t: float, ack: ClockAck) -> list[SensorEvent]:
        if ack.button is not None:
            return [ButtonPress(t, ack.button)]
        if ack.version is not None:
            self.version = ack.version
        if ack.command == protocol.Clock.SETNRUN and ack.ok:
            self.tracker.clock_being_set()
        return []


# --- writing ----------------------------------------------------------------------


def move_text_3000(san: str, ply: int) -> str:
    """Eight characters for a DGT 3000: ``12.Nxf3+`` or ``12...Nf6``.

    When that is too long, Black's dots shrink (``12..Nxf3``), then the number
    goes with a space (``12 Qxd8+``), then the bare SAN (at most 7 characters).
    """
    number = (ply + 1) // 2
    first_of_the_number = ply % 2 == 1  # White's half of move ``number``
    candidates = (
        [f"{number}.{san}"] if first_of_the_number else [f"{number}...{san}", f"{number}..{san}"]
    )
    candidates += [f"{number} {san}", san]
    return next((text for text in candidates if len(text) <= 8), san[:8]).ljust(8)


def move_text_xl(uci: str) -> str:
    """Six seven-segment characters for a DGT XL: the move as squares, ``e2 e4``-like.

    Piece letters and ``x`` have no clear seven-segment shape, so the XL shows
    the from and to squares (and the promotion piece, lower case).
    """
    if len(uci) >= 5:
        return uci[:5].lower().ljust(6)
    return f"{uci[:2]} {uci[2:4]}".ljust(6)


class ClockWriter:
    """What a clock is to show, in; the clock command frames to send (in order), out.

    The daemon's clock display (``daemon.clock.display``) tells it the game started
    or a move was made, from the domain events it dispatches on; this layer knows
    no events (drivers import nothing of the daemon). ``model`` is ``dgt3000`` (8
    ASCII characters) or ``xl`` (6 seven-segment characters); the daemon sets it
    from the clock's version ack (:attr:`DgtClockInterpreter.model`). Pure: nothing
    is sent here.

    A schedule is a list of frames with when to send each (seconds from now). A DGT
    clock keeps showing a text until told to go back to its times, so a move shown
    is followed, ``hold_seconds`` later, by the END command (the players need their
    times). A sender should drop a pending END when newer frames arrive before it
    is due.
    """

    def __init__(
        self,
        model: ClockModel = "dgt3000",
        time_control: TimeControl | None = None,
        show_moves: bool = True,
        set_and_run_at_start: bool = False,
        hold_seconds: float = 3.0,
    ) -> None:
        self.model = model
        self.hold_seconds = hold_seconds
        self.time_control = time_control
        self.show_moves = show_moves
        self.set_and_run_at_start = set_and_run_at_start

    def move_schedule(self, san: str, uci: str, ply: int) -> list[tuple[float, bytes]]:
        """A move made: its text at once, the times again ``hold_seconds`` later
        (nothing when moves are not shown)."""
        if not self.show_moves:
            return []
        return [(0.0, self.move_frame(san, uci, ply)), (self.hold_seconds, protocol.clock_end())]

    def start_schedule(self, runs: Side | None) -> list[tuple[float, bytes]]:
        """A new game: the time control's times on both sides, ``runs``'s running
        (White's, which the daemon knows; None: not known, the clock is set paused
        and the first press starts it, 6.5), when ``set_and_run_at_start``; else
        nothing."""
        if not (self.set_and_run_at_start and self.time_control is not None):
            return []
        start = round(self.time_control.initial_seconds())
        return [(0.0, set_and_run(start, start, runs))]

    def move_frame(self, san: str, uci: str, ply: int) -> bytes:
        if self.model == "xl":
            return protocol.clock_display_xl(move_text_xl(uci))
        return protocol.clock_ascii(move_text_3000(san, ply))


def set_and_run(left: float, right: float, running: Side | None) -> bytes:
    """The SetNRun frame that puts these times on a DGT clock, ``running``'s time
    running (None: the clock set paused).

    Used at game start and after an arbiter's correction (a penalty, 7.4b / 9.5b:
    the daemon's ``daemon.clock.penalty`` places the times ``apply_penalty`` gives on
    the sides it knows are White's and Black's)."""
    left_seconds, right_seconds = _clock_seconds(left), _clock_seconds(right)
    if running is None:
        return _paused(left_seconds, right_seconds)
    return protocol.clock_set_and_run(
        left_seconds,
        right_seconds,
        left_counts=running == "left",
        right_counts=running == "right",
        toggle=False,
    )


def _paused(left: int, right: int) -> bytes:
    # The run byte is 0x01 (left runs), 0x02 (right runs) or 0x04 (paused): the
    # values the peers send and real clocks accept; the lever toggles as usual.
    return protocol.clock_set_and_run(
        left, right, left_counts=False, right_counts=False, pause=True, toggle=False
    )


def _clock_seconds(value: float) -> int:
    return max(0, min(MAX_CLOCK_SECONDS, round(value)))
