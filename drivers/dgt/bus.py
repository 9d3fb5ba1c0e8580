"""DGT bus mode: many boards daisy-chained on one serial line (sans-I/O).

A club's chain of up to a dozen serial boards shares one 9600-baud line. In bus mode
(``../shared/docs/dgt-protocol.md`` section 1.13) a board speaks only when spoken to:
every command carries the address of the board it is for (the board's serial number
as a 14-bit value) and a checksum, and every reply carries the board's address and
a checksum. The PC polls the boards in turn with SEND_CHANGES; each reply lists the
pieces that changed since the last call, in the EEPROM log's format.

This module is :class:`BusPoller`, the polling state machine: which command goes
next, what a reply or a time-out means, when a board counts as gone and how it is
found again. The bytes are the codec's (``drivers/dgt/buscodec.py``: commands, reply
framing, checksums, the changes' format). Neither reads a port or a clock: time is an
argument, so the whole protocol is tested without a serial line
(``drivers/dgt/buslink.py`` is the I/O shell).

Why the poller is cautious:

- A reply with a bad checksum to SEND_CHANGES is answered with REPEAT_CHANGES, never
  SEND_CHANGES again: the board cleared its changes when it sent them, so asking
  anew would lose a piece set down. So is a reply cut short by its time-out, and a
  repeat that got no answer is sent again: the board keeps the list until the next
  SEND_CHANGES, and a repeat sent while it was still sending the list is lost.
- A board's input buffer holds one command in bus mode, so exactly one command is on
  the line at a time, and the next one waits for the reply or its time-out (80 ms).
  A late change list is still used; one that has begun holds the line until it ends,
  and if it stops halfway the board its header names is asked to repeat it (that
  board forgot it when it sent it), whichever board's answer was awaited.
- A board that misses ``max_misses`` polls in a row is reported lost and pinged now
  and then. New boards are found by a broadcast ping.
- A board found (at start-up, after it was lost, after the port was reopened) is
  first asked for its changes, then dumped: what it kept since the last call
  (everything made while the daemon was down or the line was out, as long as the
  board had power) comes with the dump as its ``backlog``, never as field updates
  after it (they would replay an older position over the one the dump shows). The
  shell compares the dump with what it knew; when they differ and the backlog does
  not lead from one to the other, it asks the board's log since the start
  (``read_log``: SEND_FROM_START, the changes already sent), so the moves made
  meanwhile are recovered from the board itself (issue 29).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from drivers.dgt.buscodec import (
    BROADCAST,
    REPLY_OVERHEAD,
    REPLY_TO,
    SHORTEST_REPLY,
    TO_BUSMODE,
    BusCommand,
    BusGarbage,
    BusReply,
    BusReplyId,
    BusReplyParser,
    begun_address,
    decode_changes,
    decode_dump,
    encode_command,
)
from drivers.dgt.protocol import (
    MAX_PIECE_CODE,
    BoardDumpMessage,
    ClockAck,
    ClockSideTime,
    ClockTimes,
    EeClockTime,
    EeMoves,
    EePieceChange,
    FieldUpdate,
    InvalidClockData,
    bwtime_times_data,
    decode_bwtime,
    placement_from_codes,
)
from drivers.records import FrozenRecord, Record


def backlog_history(
    before: tuple[int, ...], data: bytes, after: tuple[int, ...]
) -> list[str] | None:
    """The placements a board passed through from ``before`` (its codes when last
    read) to ``after`` (its dump now), by the change list it kept meanwhile
    (``data``, EEPROM format, every change since the last call): all of it must lead
    from one to the other, else None (a change list lost on the way, a board without
    power meanwhile: its log since the start may tell)."""
    changes = [e for e in EeMoves(data).events() if isinstance(e, EePieceChange)]
    if not changes or any(e.code > MAX_PIECE_CODE for e in changes):
        return None
    codes = list(before)
    placements = []
    for change in changes:
        codes[change.square] = change.code
        placements.append(placement_from_codes(tuple(codes)))
    return placements if tuple(codes) == after else None


# ---------------------------------------------------------------------------
# What the poller reports


@dataclass(eq=False, repr=False)
class BoardFound(FrozenRecord):
    """A board answered: at start-up, after it was lost, or a new one on the chain."""

    address: int
    t: float
    new: bool = False  # not one of the boards the poller was told about


@dataclass(eq=False, repr=False)
class BoardLost(FrozenRecord):
    address: int
    t: float
    detail: str


@dataclass(eq=False, repr=False)
class BoardChanges(FrozenRecord):
    """Changes read from a board at ``t`` (asked then: made before), made after
    ``since`` (its previous read, which did not have them; None: unknown)."""

    address: int
    t: float
    updates: tuple[FieldUpdate, ...]
    since: float | None = None


@dataclass(eq=False, repr=False)
class BoardContents(FrozenRecord):
    """A full dump; ``after_return`` when it follows a loss (always worth reporting).

    ``resync``: the first dump since the board was found, and ``backlog`` the change
    list (EEPROM format) it answered just before it: what it kept since the last
    SEND_CHANGES anybody sent, None when that list could not be read."""

    address: int
    t: float
    dump: BoardDumpMessage
    after_return: bool
    resync: bool = False
    backlog: bytes | None = None


@dataclass(eq=False, repr=False)
class BoardLog(FrozenRecord):
    """A board's log since the start (SEND_FROM_START, EEPROM format: the changes it
    has already sent), or None when it gave none (no answer, damaged every time)."""

    address: int
    t: float
    data: bytes | None


@dataclass(eq=False, repr=False)
class BoardAnswered(FrozenRecord):
    """The board answered a poll sent at ``t``: every change it made before ``t`` has
    been read (the bus's liveness, as a single board's answer to its probe; at most
    every ``heard_interval``, and at once after ``probe``)."""

    address: int
    t: float


@dataclass(eq=False, repr=False)
class BoardClock(FrozenRecord):
    address: int
    t: float
    clock: ClockTimes | ClockAck | InvalidClockData


@dataclass(eq=False, repr=False)
class BoardVersion(FrozenRecord):
    address: int
    t: float
    major: int
    minor: int


@dataclass(eq=False, repr=False)
class BusProblem(FrozenRecord):
    """A reply the poller could not use (bad checksum, wrong board, unreadable)."""

    address: int
    t: float
    detail: str


BusEvent = (
    BoardFound
    | BoardLost
    | BoardChanges
    | BoardContents
    | BoardClock
    | BoardVersion
    | BusProblem
    | BoardLog
    | BoardAnswered
)


# ---------------------------------------------------------------------------
# The polling state machine


@dataclass(eq=False, repr=False)
class BusTimings(Record):
    """Every time the poller waits for, in seconds (the tests shorten them)."""

    reply_timeout: float = 0.08
    """How long a board may stay silent when it owes a reply (the header's 80 ms); a
    reply that has begun gets as long again after each part of it."""
    ping_window: float = 1.1
    """A broadcast ping's answers come at random within this time."""
    clock_interval: float = 2.0
    """How often each board's clock is asked for besides the reading after each press
    (``_release``). A press's own time is in the change list, and the page, the
    speech and the rules core count the running side down themselves, so a reading
    between presses only checks them: each takes 17 bytes of the line every board
    waits on. At 1 s a 12-board chain's readings held up its presses (press ->
    change list p99 at 6 ms of the daemon's reaction a command: 240 ms, against 228
    ms at 2 s; at 10 ms 297 against 277: ``benchmarks.bus_order``)."""
    lost_ping_interval: float = 1.0
    """How often a lost board is pinged."""
    discovery_interval: float = 300.0
    """How often a broadcast ping looks for boards added to the chain (0: never). The
    line is quiet for ``ping_window`` meanwhile (with the IGNORE_NEXT_BUS_PING to
    every known board, ~1.3 s in which no press is read): every 30 s that held up 4%
    of a 12-board hall's moves at blitz pace by up to 1.6 s (press -> move p99 1.36 s
    against 500 ms, issue 19); every 5 minutes it is under 0.5% of them, and a board
    plugged in is still found within 5 minutes (a lost board has its own pings). The
    first comes at start-up only when a board the poller was told about did not
    answer (``BusPoller._after_interval``)."""
    quiet_dump_after: float = 3.0
    """A board whose changes stopped this long ago is dumped once, to check its shadow.
    Longer than a single board's 1 s: a dump is 74 bytes of the line all boards share,
    and the change lists are checksummed and repeated, so it is a safety net only."""
    max_misses: int = 3
    """Polls in a row without a usable reply before a board counts as lost."""
    max_repeats: int = 3
    """REPEAT_CHANGES in a row for one bad reply before giving up on it (and dumping)."""
    poll_interval: float = 0.05
    """The shortest time between two SEND_CHANGES to one board: with few boards on the
    chain the line could carry a poll every 10 ms, which costs CPU and tells nothing
    more (the board scans its sensors every 200-250 ms). With many boards the line
    itself is the limit."""
    press_window: float = 2.0
    """How long after a piece change with no lever press after it (a move under way)
    the board's press is awaited (``press_weight``). A press waits for its board's
    next poll, and on a 12-board chain at 9600 baud every board polled in turn is a
    round of 250-300 ms; a blitz player presses 0.15-0.6 s after setting the piece
    down, and after castling or re-centring a piece up to a second later (1 s left
    such presses to the round: a castling's press was its board's slowest in every
    hall run; ``benchmarks.bus_order`` at 10 ms a command: worst boards 301-450 ms
    with 1 s, 302-342 ms with 2 s). A press later than this is read as any other
    change."""
    press_weight: float = 3.0
    """How much faster a board whose press is awaited is polled: the next poll goes
    to the board that waited longest, a board whose press is awaited counting its
    wait this many times. One press awaited is read within ~0.1 s on a 12-board chain;
    with all twelve awaited (a round's first moves) the line is shared as in turn,
    and no board waits more than this many times the others' wait. (Issue 19 polled
    an awaited board every 0.1 s on every other command: with many awaited the others
    waited two rounds, and a press that came with its piece in one change list
    waited up to 0.5 s: ``benchmarks.bus_order``.) At 2 the worst board's press ->
    change list p99 was 175-245 ms at 2 ms of the daemon's reaction a command and
    288-345 ms at 10 ms; at 3, 169-190 and 239-285 ms; at 4 and 6 the tail grew
    again (462 and 659 ms at 10 ms): a board not yet known to be moving waits that
    many times longer, and a press that comes in one change list with its piece
    waits with it."""
    housekeeping_defer: float = 1.0
    """How much longer a board's clock reading and its quiet dump may wait while a
    press is awaited on the chain: its clock is then read every ``clock_interval``
    plus this at worst (a press's own time is in the change list that holds it,
    never from this reading), and the line they took (a quarter of it: 17 bytes a
    reading, 74 a dump) goes to the presses."""
    heard_interval: float = 1.0
    """How often a board's answer is reported as heard (``BoardAnswered``), as a
    single board answers its liveness probe; at once after ``BusPoller.probe``."""
    log_timeout: float = 1.0
    """How long a board may take to begin its from-start log (it reads its EEPROM)."""


@dataclass(eq=False, repr=False)
class _Board(Record):
    address: int
    present: bool = False
    known: bool = True  # configured (or adopted once found)
    misses: int = 0
    needs_dump: bool = True
    after_return: bool = False
    next_clock: float = 0.0
    next_ping: float = 0.0
    last_change: float | None = None  # since the last confirming dump
    needs_version: bool = True
    absent_reported: bool = False
    held: list[FieldUpdate | EeClockTime] = field(default_factory=list)
    clock_now: bool = False  # a press and no reading to tell it with: the clock first
    reading: ClockTimes | None = None  # the clock as it last stood (read, or pressed since)
    #: the side to move (left, right) the last clock told showed, read or pressed
    told_to_move: tuple[bool, bool] | None = None
    #: a reading showing a press its changes have not brought yet: told after them
    clock_after_changes: ClockTimes | None = None
    asked_at: float = 0.0  # when its changes were last asked for: they happened before
    read_at: float | None = None  # when the changes last read were asked for
    since: float | None = None  # the read before those: they happened after it
    then_after_changes: BusCommand | None = None  # asked for with these changes
    then: BusCommand | None = None  # due now that the changes are in
    move_under_way: float | None = None  # a piece changed then, no press after it yet
    catching_up: bool = True  # found, its backlog and dump not yet both in
    needs_backlog: bool = True  # found: its kept changes first (held, not released)
    backlog: bytes | None = b""  # what it kept, for the dump that follows
    needs_log: bool = False  # the shell asked for its log since the start
    log_tries: int = 0
    probe_at: float | None = None  # the shell asked to hear it then (a held decision)
    heard_due: float = 0.0  # when its next answer is reported as heard


@dataclass(eq=False, repr=False)
class _Outstanding(Record):
    command: BusCommand
    address: int
    sent: float
    deadline: float
    repeats: int = 0


@dataclass(eq=False, repr=False)
class BusStats(Record):
    """What went over the line, for the link's status and the benchmark."""

    bytes_out: int = 0
    bytes_in: int = 0
    commands: int = 0
    replies: int = 0
    timeouts: int = 0
    bad_checksums: int = 0
    repeats: int = 0
    garbage_bytes: int = 0
    late_replies: int = 0
    bad_logs: int = 0
    by_command: dict[str, int] = field(default_factory=dict)


class BusPoller:
    """Decides, one command at a time, what goes on the bus and what replies mean.

    Drive it with ``next_command(now)`` when the line is free (returns the bytes to
    write, or None if nothing is due before ``deadline()``), ``feed(data, now)`` with
    bytes read, and ``expire(now)`` once ``deadline()`` has passed. Each returns the
    :data:`BusEvent` values the change means, in order.
    """

    def __init__(
        self,
        addresses: Iterable[int] = (),
        timings: BusTimings | None = None,
        *,
        discover: bool = True,
    ) -> None:
        self.timings = timings or BusTimings()
        self.discover = discover
        self.boards: dict[int, _Board] = {a: _Board(a) for a in addresses}
        self.parser = BusReplyParser()
        self.stats = BusStats()
        self._order: list[int] = list(self.boards)
        self._outstanding: _Outstanding | None = None
        self._pinging_until: float | None = None
        self._next_discovery = 0.0 if discover else float("inf")
        self._discovery_placed = not discover  # the first one's time, once the boards answered
        self._ignored: set[int] = set()  # told to ignore the next broadcast ping
        self._started = False
        #: change lists to ask for again (REPEAT_CHANGES), in order: address -> repeats so far
        self._repeats_owed: dict[int, int] = {}
        self._polled_at: dict[int, float] = {}  # when each board's changes were last asked

    # -- the configuration --------------------------------------------------

    def add(self, address: int) -> None:
        if address not in self.boards:
            self.boards[address] = _Board(address)
            self._order.append(address)

    def read_log(self, address: int) -> None:
        """Ask board ``address`` for its log since the start, next (``BoardLog``)."""
        board = self.boards.get(address)
        if board is not None:
            board.needs_log, board.log_tries = True, 0

    def probe(self, address: int, now: float) -> None:
        """Poll board ``address`` out of turn and report its answer (``BoardAnswered``):
        a decision held until the board is heard need not wait for its turn."""
        board = self.boards.get(address)
        if board is not None:
            board.probe_at = now

    @property
    def reading_log(self) -> bool:
        """The command on the line is a from-start log request."""
        out = self._outstanding
        return out is not None and out.command == BusCommand.SEND_FROM_START

    @property
    def present(self) -> list[int]:
        return [a for a in self._order if self.boards[a].present]

    def awaited_bytes(self) -> int:
        """How many bytes the reply awaited still lacks at least (1: none awaited, or
        a broadcast ping's answers, which come at random): the shell need not wake
        for fewer (``BusLink``: a reply in parts woke the loop once a part, the most
        of a chain's CPU on a Pi Zero 2 W's budget, issue 28)."""
        out = self._outstanding
        if out is None or self._pinging_until is not None:
            return 1
        return self.parser.lacking(SHORTEST_REPLY.get(out.command, REPLY_OVERHEAD))

    @property
    def busy(self) -> bool:
        """A reply is awaited (or a broadcast ping's answers): nothing may be sent."""
        return self._outstanding is not None or self._pinging_until is not None

    # -- time ---------------------------------------------------------------

    def deadline(self) -> float | None:
        """When ``expire`` must be called (a reply's time-out, a ping window's end)."""
        if self._outstanding is not None:
            return self._outstanding.deadline
        return self._pinging_until

    def expire(self, now: float) -> list[BusEvent]:
        events: list[BusEvent] = []
        if self._pinging_until is not None and now >= self._pinging_until:
            self._pinging_until = None
            self._ignored.clear()
        out = self._outstanding
        if out is None or now < out.deadline:
            return events
        self._outstanding = None
        self.stats.timeouts += 1
        begun = self.parser.reset()
        if begun is not None:
            self.stats.garbage_bytes += len(begun.data)
        board = self.boards.get(out.address)
        if board is None:
            return events
        if out.command == BusCommand.PING and not board.present:
            if board.absent_reported:
                return events
            board.absent_reported = True  # said once: a configured board is not there
            return [*events, BoardLost(board.address, now, "not on the chain")]
        other = self._whose(begun.data) if begun is not None else None
        if other is not None and begun is not None and other.address != out.address:
            return events + self._cut_short_from(other, begun.data[0], out, now)
        if out.command == BusCommand.SEND_FROM_START:
            return events + self._log_failed(board, now, "no log" if not begun else "log cut short")
        if out.command in (BusCommand.SEND_CHANGES, BusCommand.REPEAT_CHANGES) and begun:
            # Part of a change list arrived: the board has sent (and cleared) it.
            return events + self._repeat(out, now, "reply cut short")
        return events + self._unanswered(board, out, now)

    def _unanswered(self, board: _Board, out: _Outstanding, now: float) -> list[BusEvent]:
        """``out`` got no answer from ``board``: a repeat is asked for again (the board
        still holds that list), any other command at the next chance; a missed poll."""
        if out.command == BusCommand.REPEAT_CHANGES:
            return self._repeat_unanswered(board, out, now)
        self._retry_soon(board, out.command, now)
        return self._missed(board, now, f"no answer to {out.command.name}")

    def _cut_short_from(
        self, other: _Board, reply_id: int, out: _Outstanding, now: float
    ) -> list[BusEvent]:
        """Another board's late reply, cut short by the time-out of the one awaited
        (board 1 answered after its time-out, while board 2's answer was awaited, and
        stopped halfway: issue 28's flaky hall test). The awaited board said nothing;
        the other forgot its change list when it sent it, so it is asked to repeat it
        (asking board 2 instead, as a reply of its own, lost board 1's move)."""
        events = self._unanswered(self.boards[out.address], out, now)
        if reply_id == BusReplyId.UPDATE and other.present:
            cut = _Outstanding(BusCommand.SEND_CHANGES, other.address, now, now)
            events += self._repeat(cut, now, "late change list cut short")
        return events

    def _whose(self, begun: bytes) -> _Board | None:
        """The board a reply cut short came from, when its header says (None: too
        short to tell, or no board of the chain)."""
        address = begun_address(begun)
        return self.boards.get(address) if address is not None else None

    def _retry_soon(self, board: _Board, command: BusCommand, now: float) -> None:
        """A command that got no usable answer is asked again at the next chance (a
        clock asked for after a lever press is asked again before the held changes
        go on)."""
        if command == BusCommand.SEND_CLK:
            board.next_clock = now
        elif command == BusCommand.SEND_BRD:
            board.needs_dump = True

    # -- choosing the next command --------------------------------------------

    def next_command(self, now: float) -> bytes | None:
        """The next command to write, or None (the line is busy, or nothing is due)."""
        if self.busy:
            return None
        if not self._started:
            self._started = True
            return self._count(bytes([TO_BUSMODE]), "TO_BUSMODE")
        if self._repeats_owed:  # the same change list again, at once
            address = next(iter(self._repeats_owed))
            repeats = self._repeats_owed.pop(address)
            deadline = now + self.timings.reply_timeout
            command = BusCommand.REPEAT_CHANGES
            self._outstanding = _Outstanding(command, address, now, deadline, repeats)
            return self._count(encode_command(command, address), command.name)
        choice = self._choose(now)
        if choice is None:
            return None
        command, address = choice
        if command == BusCommand.PING and address == BROADCAST:
            self._pinging_until = now + self.timings.ping_window
            self._next_discovery = self._after_interval(self._pinging_until)
        else:
            window = self.timings.reply_timeout
            if command == BusCommand.SEND_FROM_START:
                window = max(window, self.timings.log_timeout)
            self._outstanding = _Outstanding(command, address, now, now + window)
        return self._count(encode_command(command, address), command.name)

    def _after_interval(self, now: float) -> float:
        """When the next broadcast ping is due, one ``discovery_interval`` from ``now``.

        The first one comes as soon as the boards found at start-up are caught up when
        a board the poller was told about did not answer (its address mistyped in the
        configuration, say: the board found tells), else this long after: a daemon
        restarted in mid-round reads its boards' presses first. Its ``ping_window`` of
        quiet at start-up held every board's return by 1.1 s after a SIGKILL (``pihall
        --restart-at``), and put off to later it held that moment's presses instead; a
        board not named is only reported (the daemon reads none but its ``boards:``)."""
        interval = self.timings.discovery_interval
        return now + interval if interval > 0 else float("inf")

    def _count(self, frame: bytes, name: str) -> bytes:
        self.stats.bytes_out += len(frame)
        self.stats.commands += 1
        self.stats.by_command[name] = self.stats.by_command.get(name, 0) + 1
        return frame

    def _choose(self, now: float) -> tuple[BusCommand, int] | None:
        # Boards not (or no longer) answering: ping, at most once a lost_ping_interval.
        for address in self._order:
            board = self.boards[address]
            if not board.present and now >= board.next_ping:
                board.next_ping = now + self.timings.lost_ping_interval
                return BusCommand.PING, address
        present = self.present
        for address in present:  # a lever was pressed: who is to move, before anything
            if self.boards[address].clock_now:
                return BusCommand.SEND_CLK, address
        for address in present:  # a clock read ahead of its press: the changes first
            board = self.boards[address]
            if board.clock_after_changes is not None and not board.catching_up:
                return self._poll(board, now)
        for address in present:  # what a board that came back needs first
            board = self.boards[address]
            if board.needs_backlog:  # what it kept, then its dump: in that order
                board.asked_at = now
                return BusCommand.SEND_CHANGES, address
            if board.needs_dump:
                return BusCommand.SEND_BRD, address
            if board.needs_log:
                return BusCommand.SEND_FROM_START, address
        if not self._discovery_placed:  # every board pinged and caught up: who answered?
            self._discovery_placed = True
            if self.boards and len(present) == len(self.boards):
                self._next_discovery = self._after_interval(now)
        if self.discover and now >= self._next_discovery:
            for address in present:  # the known boards keep quiet this time
                if address not in self._ignored:
                    self._ignored.add(address)
                    return BusCommand.IGNORE_NEXT_BUS_PING, address
            return BusCommand.PING, BROADCAST
        for address in present:  # what was asked for with a board's changes, right after
            board = self.boards[address]
            if board.then is not None:
                then, board.then = board.then, None
                return then, address
        for address in present:  # a held decision waits for this board: poll it now
            board = self.boards[address]
            if board.probe_at is not None and board.probe_at <= now:
                return self._poll(board, now)
        return self._next_in_turn(now, present)

    def _next_in_turn(self, now: float, present: list[int]) -> tuple[BusCommand, int] | None:
        """The board that waited longest for its poll (a press awaited counting its wait
        ``press_weight`` times; the line is shared: no board starves the others), with
        its clock or a quiet-board dump right after its changes when due, so nothing
        overtakes a change."""
        timings = self.timings
        awaiting = [self._awaits_press(self.boards[a], now) for a in present]
        defer = timings.housekeeping_defer if any(awaiting) else 0.0
        chosen: _Board | None = None
        longest = -1.0
        for address, awaits_press in zip(present, awaiting, strict=True):
            board = self.boards[address]
            polled = self._polled_at.get(address)
            due = (
                polled is None
                or now - polled >= timings.poll_interval
                or now >= board.next_clock + defer
                or self._quiet_due(board, defer) <= now
            )
            if not due:
                continue
            waited = now - polled if polled is not None else float("inf")
            if awaits_press:
                waited *= timings.press_weight
            if waited > longest:
                chosen, longest = board, waited
        if chosen is None:
            return None
        if now >= chosen.next_clock + defer:
            chosen.next_clock = now + timings.clock_interval
            chosen.then_after_changes = BusCommand.SEND_CLK
        elif self._quiet_due(chosen, defer) <= now:
            chosen.last_change = None
            chosen.then_after_changes = BusCommand.SEND_BRD
        elif chosen.needs_version:
            # Only told (``BoardVersion``): after a poll, not ahead of every board's first
            # (at start-up, 12 of them held a restarted hall's return by 1.2 s at a Pi
            # Zero's budget).
            chosen.then_after_changes = BusCommand.SEND_VERSION
        return self._poll(chosen, now)

    def _poll(self, board: _Board, now: float) -> tuple[BusCommand, int]:
        self._polled_at[board.address] = now
        board.asked_at = now
        return BusCommand.SEND_CHANGES, board.address

    def _awaits_press(self, board: _Board, now: float) -> bool:
        """A piece changed on the board and no press after it yet (a move under way)."""
        since = board.move_under_way
        return since is not None and now - since < self.timings.press_window

    def _press_awaited(self, now: float, present: list[int]) -> bool:
        return any(self._awaits_press(self.boards[a], now) for a in present)

    def _quiet_due(self, board: _Board, defer: float) -> float:
        """When a board whose changes stopped is dumped once (its shadow checked)."""
        if board.last_change is None:
            return float("inf")
        return board.last_change + self.timings.quiet_dump_after + defer

    def idle_until(self, now: float) -> float:
        """When ``next_command`` next has something to send (the line is free and
        nothing is due now): the shell sleeps until then."""
        if self.busy:
            return self.deadline() or now
        if self._repeats_owed or not self._started:
            return now
        times = [self._next_discovery] if self.discover else []
        defer = self.timings.housekeeping_defer if self._press_awaited(now, self.present) else 0.0
        for address in self._order:
            board = self.boards[address]
            if not board.present:
                times.append(board.next_ping)
                continue
            times.append(board.next_clock + defer)
            times.append(self._polled_at.get(address, 0.0) + self.timings.poll_interval)
            times.append(self._quiet_due(board, defer))
        return max(now, min(times)) if times else now + self.timings.lost_ping_interval

    # -- replies ------------------------------------------------------------

    def feed(self, data: bytes, now: float) -> list[BusEvent]:
        self.stats.bytes_in += len(data)
        events: list[BusEvent] = []
        for item in self.parser.feed(data):
            if isinstance(item, BusGarbage):
                self.stats.garbage_bytes += len(item.data)
                continue
            self.stats.replies += 1
            events.extend(self._reply(item, now))
        out = self._outstanding
        if out is not None and self.parser.pending:
            # The answer has begun: the time-out is for a board that says nothing, and a
            # dump takes 70 ms of line time at 9600 baud by itself.
            out.deadline = max(out.deadline, now + self.timings.reply_timeout)
        elif out is None and self.parser.pending and self._pinging_until is None:
            self._await_late_list(now)
        return events

    def _await_late_list(self, now: float) -> None:
        """A board's change list began after its time-out, with nothing awaited: the
        line is its board's until the list ends (a command now would be answered into
        it, and the list dropped as garbage), and a list that stops halfway is asked for
        again, as an awaited one is: its board forgot it when it sent it (on an idle
        line, a single board's or between polls, such a list was lost with its move)."""
        begun = self.parser.begun
        board = self._whose(begun)
        if board is not None and board.present and begun[0] == BusReplyId.UPDATE:
            deadline = now + self.timings.reply_timeout
            command = BusCommand.SEND_CHANGES
            self._outstanding = _Outstanding(command, board.address, board.asked_at, deadline)

    def _reply(self, reply: BusReply, now: float) -> list[BusEvent]:
        if reply.reply_id == BusReplyId.PING and self._pinging_until is not None:
            return self._ping_answer(reply, now)
        out = self._outstanding
        if out is None or reply.address != out.address or reply.reply_id != REPLY_TO[out.command]:
            # Not the answer awaited: a late one to an earlier command (which may be the
            # board's change list); the answer awaited may still come.
            return self._late(reply, now)
        if not reply.valid:
            self.stats.bad_checksums += 1
            if out.command in (BusCommand.SEND_CHANGES, BusCommand.REPEAT_CHANGES):
                return self._repeat(out, now, "bad checksum")
            if out.command == BusCommand.SEND_FROM_START:
                self._outstanding = None
                return self._log_failed(self.boards[out.address], now, "log with a bad checksum")
            self._outstanding = None
            self._retry_soon(self.boards[out.address], out.command, now)
            return [BusProblem(out.address, now, f"bad checksum on {out.command.name}")]
        self._outstanding = None
        board = self.boards[out.address]
        events: list[BusEvent] = []
        if not board.present:
            board.present, board.needs_dump, board.absent_reported = True, True, False
            _catch_up(board)
            events.append(BoardFound(board.address, now, new=not board.known))
        board.misses = 0
        events.extend(self._use(board, reply, now))
        if reply.reply_id == BusReplyId.UPDATE and not board.catching_up:
            events.extend(self._heard(board, out.sent))
        return events

    def _heard(self, board: _Board, sent: float) -> list[BusEvent]:
        """The board answered a poll sent at ``sent``: reported when it is due."""
        asked = board.probe_at is not None and sent >= board.probe_at
        if not asked and sent < board.heard_due:
            return []
        if asked:
            board.probe_at = None
        board.heard_due = sent + self.timings.heard_interval
        return [BoardAnswered(board.address, sent)]

    def _log_failed(self, board: _Board, now: float, why: str) -> list[BusEvent]:
        """A from-start log that did not come whole: asked again (it is not consumed),
        up to ``max_repeats``; then the board gave none."""
        self.stats.bad_logs += 1
        board.log_tries += 1
        if board.log_tries < self.timings.max_repeats and why != "no log":
            return [BusProblem(board.address, now, why)]
        board.needs_log = False
        return [BusProblem(board.address, now, why), BoardLog(board.address, now, None)]

    def _late(self, reply: BusReply, now: float) -> list[BusEvent]:
        """A reply after its time-out (a busy board, a slow line). A change list is
        used all the same: the board forgot those changes when it sent them, so they
        are nowhere else (a damaged one is asked for again once the line is free);
        a late dump or clock reading is still true."""
        self.stats.late_replies += 1
        board = self.boards.get(reply.address)
        detail = f"late reply 0x{reply.reply_id:02x} from {reply.address}"
        if board is None or not board.present:
            return [BusProblem(reply.address, now, detail)]
        if reply.reply_id == BusReplyId.UPDATE and not reply.valid:
            self.stats.bad_checksums += 1
            self._repeats_owed[board.address] = 1
            return [BusProblem(reply.address, now, detail + " with a bad checksum")]
        if reply.valid and reply.reply_id in (
            BusReplyId.UPDATE,
            BusReplyId.BRD_DUMP,
            BusReplyId.BWTIME,
        ):
            board.misses = 0
            used = self._use(board, reply, now, late=True)
            return [BusProblem(reply.address, now, detail), *used]
        return [BusProblem(reply.address, now, detail)]

    def _use(
        self, board: _Board, reply: BusReply, now: float, late: bool = False
    ) -> list[BusEvent]:
        address = board.address
        if reply.reply_id == BusReplyId.UPDATE and board.catching_up:
            # What the board kept since the last call (a late one is older still):
            # it goes with the dump that follows, never as updates after it.
            board.needs_backlog = False
            readable = decode_changes(reply.data) is not None
            if board.backlog is None or not readable:
                board.backlog = None
            else:
                kept = bytes(reply.data)
                board.backlog = kept + board.backlog if late else board.backlog + kept
            board.then_after_changes = None
            return []
        if reply.reply_id == BusReplyId.UPDATE:
            board.then, board.then_after_changes = board.then_after_changes, None
            changes = decode_changes(reply.data)
            if changes is None:
                board.needs_dump = True  # the list is unreadable: the dump says what is there
                return [BusProblem(address, now, "unreadable change list")]
            if not changes:
                board.read_at = None if late else board.asked_at  # none made before it
                return self._clock_after_changes(board, now)
            board.last_change = now
            # the previous read did not have them (a late reply: which read is unsure)
            board.since = None if late else board.read_at
            board.read_at = None if late else board.asked_at
            # A piece moved and no press after it: the press is next (watched).
            pressed_last = isinstance(changes[-1], EeClockTime)
            board.move_under_way = None if pressed_last else board.asked_at
            board.held.extend(changes)
            return [*self._release(board, now), *self._clock_after_changes(board, now)]
        if reply.reply_id == BusReplyId.BRD_DUMP:
            dump = decode_dump(reply.data)
            if dump is None:
                board.needs_dump = True
                return [BusProblem(address, now, "unreadable board dump")]
            after_return, board.after_return = board.after_return, False
            board.needs_dump = False
            if board.catching_up and not board.needs_backlog:
                board.catching_up = False
                backlog, board.backlog = board.backlog, b""
                board.last_change = None
                return [BoardContents(address, now, dump, after_return, True, backlog)]
            return [BoardContents(address, now, dump, after_return)]
        if reply.reply_id == BusReplyId.BWTIME:
            asked, board.clock_now = board.clock_now, False
            reading = decode_bwtime(reply.data)
            if isinstance(reading, ClockTimes) and not reading.no_clock:
                board.reading = reading
            # The held changes (and the press that waited for this reading) were made
            # before it was asked for: they go first, the clock as it stands now last.
            events = self._release(board, now, clock_read=asked)
            if isinstance(reading, ClockTimes) and self._ahead_of_changes(board, reading):
                board.clock_after_changes = reading
                return events
            board.clock_after_changes = None  # an older one held: this one says more
            return [*events, self._told(board, BoardClock(address, now, reading))]
        if reply.reply_id == BusReplyId.FROM_START:
            if not board.needs_log:
                return []  # a late copy of a log already given up on
            board.needs_log = False
            return [BoardLog(address, now, bytes(reply.data))]
        if reply.reply_id == BusReplyId.VERSION:
            board.needs_version = False
            if len(reply.data) >= 2:
                return [BoardVersion(address, now, reply.data[0], reply.data[1])]
        return []

    def _release(self, board: _Board, now: float, clock_read: bool = False) -> list[BusEvent]:
        """The changes held for a board, in the order the player made them, with each
        lever press in the list as a clock reading of its own, so the rules core hears
        piece, press, piece.

        The press is read from the list itself (the side that pressed and the time it
        then showed), never from a SEND_CLK sent afterwards: a slow chain brings two
        moves in one list, or the opponent presses before the clock is asked, and the
        clock then shows the same side to move as before the first press, so both
        presses were lost and the moves never decided (a 12-board chain under load lost
        the last two plies of a game that way). The clock is read soon after, for the
        other side's time. Only when that time is not known is the clock asked at once,
        the press and the changes after it held: before the first reading of a board (a
        board found after a restart, whose first list may hold two presses), and when
        the last reading showed the clock stopped (the press started it, and it may have
        been set since: a clock set and started between two readings was told with the
        old game's time on the side that did not press);
        the press is then told with that reading (``clock_read``), never dropped: a
        restarted daemon that lost it heard White's press as none, and decided every
        later move one press late (issue 29). A board with no clock to read drops it.

        The changes are stamped with the time they were asked for: they happened
        before it, however long the reply took (a poll slowed by the line or the
        machine delays a move, it does not make it later than it was)."""
        events: list[BusEvent] = []
        updates: list[FieldUpdate] = []
        while board.held and not board.clock_now:
            change = board.held.pop(0)
            if not isinstance(change, EeClockTime):
                updates.append(change)
                continue
            if not clock_read and (board.reading is None or not board.reading.running):
                board.held.insert(0, change)  # told once the clock is read
                board.clock_now = True
                continue
            pressed = _pressed(board.reading, change)
            if pressed is None:
                continue  # read, and no clock there to tell it with
            if updates:
                events.append(
                    BoardChanges(board.address, board.asked_at, tuple(updates), board.since)
                )
                updates = []
            board.reading = pressed
            board.next_clock = min(board.next_clock, now)
            events.append(self._told(board, BoardClock(board.address, board.asked_at, pressed)))
        if updates:
            events.append(BoardChanges(board.address, board.asked_at, tuple(updates), board.since))
        return events

    @staticmethod
    def _ahead_of_changes(board: _Board, reading: ClockTimes) -> bool:
        """The clock shows the other side to move than the last press told, and its
        changes have not brought that press yet: the opponent moved and pressed between
        the board's last change list and this reading. Told now, the rules core heard a
        press with no move on the board (a false "clock without move", 6.7, on a hall's
        board after a restart, when the first reading of a board's clock is asked for at
        once after its first press); the press is in the board's next change list."""
        if reading.no_clock or board.told_to_move is None:
            return False
        return (reading.left_to_move, reading.right_to_move) != board.told_to_move

    def _clock_after_changes(self, board: _Board, now: float) -> list[BusEvent]:
        """The reading held for the board's changes, told after them (as late as
        they were read); none when a press in them waits for a fresh one."""
        reading, board.clock_after_changes = board.clock_after_changes, None
        if reading is None or board.clock_now:
            return []
        return [self._told(board, BoardClock(board.address, now, reading))]

    @staticmethod
    def _told(board: _Board, event: BoardClock) -> BoardClock:
        """``event`` is told: its side to move is what the next reading is held to."""
        if isinstance(event.clock, ClockTimes) and not event.clock.no_clock:
            board.told_to_move = (event.clock.left_to_move, event.clock.right_to_move)
        return event

    def _repeat(
        self, out: _Outstanding, now: float, why: str, *, missed: bool = False
    ) -> list[BusEvent]:
        """Ask the board to send the same change list again (no change is lost), up
        to ``max_repeats`` times; then the list is given up (the board dumped) and
        the board counted a miss, unless ``missed``: its silence was counted."""
        board = self.boards[out.address]
        self._outstanding = None
        if out.repeats >= self.timings.max_repeats:
            _give_up_list(board)
            why = f"{why}, {out.repeats} repeats"
            return [BusProblem(out.address, now, why)] if missed else self._missed(board, now, why)
        self.stats.repeats += 1
        self._repeats_owed[out.address] = out.repeats + 1
        if board.catching_up:
            board.needs_backlog = False  # the REPEAT_CHANGES reads it (or the log will)
        return [BusProblem(out.address, now, why)]

    def _repeat_unanswered(self, board: _Board, out: _Outstanding, now: float) -> list[BusEvent]:
        """No answer to REPEAT_CHANGES. The board may still have been sending the list
        whose tail the time-out cut off (a loaded machine woke late): its one-command
        buffer was full and the repeat was lost. Or the repeat was damaged on the line.
        Either way the board keeps that list until the next SEND_CHANGES, so it is
        asked for again (each silence a miss, as any other) up to ``max_repeats``
        times; a dump instead shows the board with the moves in the list never read
        (issue 28: the flaky hall test lost a move so)."""
        why = "no answer to REPEAT_CHANGES"
        lost = self._missed(board, now, why)
        return self._repeat(out, now, why, missed=True) if board.present else lost

    def _ping_answer(self, reply: BusReply, now: float) -> list[BusEvent]:
        if not reply.valid or reply.address == BROADCAST:
            return []
        board = self.boards.get(reply.address)
        if board is None:
            board = _Board(reply.address, known=False)
            self.boards[reply.address] = board
            self._order.append(reply.address)
        if board.present:
            return []
        board.present, board.needs_dump, board.misses = True, True, 0
        _catch_up(board)
        board.absent_reported = False
        board.after_return = board.known
        found = BoardFound(reply.address, now, new=not board.known)
        board.known = True
        return [found]

    def _missed(self, board: _Board, now: float, detail: str) -> list[BusEvent]:
        if not board.present:
            return []
        board.misses += 1
        if board.misses < self.timings.max_misses:
            return []
        board.present = False
        board.absent_reported = True
        board.after_return = True
        board.needs_dump = True
        board.needs_log = False
        board.next_ping = now + self.timings.lost_ping_interval
        held = [c for c in board.held if isinstance(c, FieldUpdate)]
        board.held, board.clock_now = [], False
        events: list[BusEvent] = [BoardChanges(board.address, now, tuple(held))] if held else []
        return [*events, BoardLost(board.address, now, detail)]


def _give_up_list(board: _Board) -> None:
    """A change list asked for ``max_repeats`` times in vain: what was in it is on the
    board, so it is dumped (a board catching up: its log since the start has it)."""
    board.needs_dump = True
    if board.catching_up:
        board.needs_backlog, board.backlog = False, None


def _catch_up(board: _Board) -> None:
    """A board (found again) reads what it kept, then is dumped, before anything."""
    board.catching_up, board.needs_backlog, board.backlog = True, True, b""
    board.held, board.clock_now, board.move_under_way = [], False, None
    board.then = board.then_after_changes = None
    board.read_at = board.since = None


def _pressed(reading: ClockTimes | None, press: EeClockTime) -> ClockTimes | None:
    """The clock just after ``press``: the presser's side stopped at the time the
    board wrote, the other side running, its time as last read. None without a
    reading (nothing known of the other side)."""
    if reading is None:
        return None
    stopped = ClockSideTime(
        press.hours,
        press.minutes,
        press.seconds,
        flag_fallen=False,
        time_per_move=(reading.left if press.left else reading.right).time_per_move,
        flag_shown=False,
    )
    left, right = (stopped, reading.right) if press.left else (reading.left, stopped)
    data = bwtime_times_data(
        left,
        right,
        running=True,
        lever_right_high=press.left,  # the presser's side of the lever went down
        battery_low=reading.battery_low,
        right_to_move=press.left,
        left_to_move=not press.left,
    )
    pressed = decode_bwtime(data)
    return pressed if isinstance(pressed, ClockTimes) else None
