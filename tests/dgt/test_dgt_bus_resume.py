"""Bus boards recovered from the board itself (issue 29): what a board of the chain
kept while nobody read it (the daemon killed, the line out, the board pulled with its
power on) comes back as the dump's ``history``, from its change list or else its log
since the start (SEND_FROM_START), never as stale field updates after the dump; and
its answers are its liveness (``BoardHeard``), as a single board's probe."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from drivers.dgt import bus, buscodec
from drivers.dgt.bus import (
    BoardChanges,
    BoardContents,
    BoardFound,
    BoardLog,
    BusPoller,
    BusTimings,
)
from drivers.dgt.buscodec import BusCommand, BusReplyId
from drivers.dgt.buslink import BusLink
from drivers.dgt.protocol import (
    EeMoves,
    EePieceChange,
    codes_from_placement,
    ee_history,
    square_index,
)
from drivers.sensors import BoardDump, BoardHeard, ConnectionChange, SensorEvent, SquareChange
from drivers.simulators.busemulator import BusChainEmulator
from tests.dgt.test_dgt_bus import START, Chain, run

START_PLACEMENT = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
AFTER_E4_E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR"
AFTER_E4_E5_NF3 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R"

TIMINGS = BusTimings(reply_timeout=0.3, discovery_interval=0, clock_interval=0.5)


class LoggingChain(Chain):
    """The scripted chain with each board's log since the start (SEND_FROM_START):
    the changes already sent, as a real board keeps them."""

    def __init__(self, addresses):
        super().__init__(addresses)
        self.sent_log = {a: b"" for a in addresses}

    def answer(self, frame: bytes) -> bytes:
        if len(frame) == 4 and frame[0] == BusCommand.SEND_FROM_START:
            address = (frame[1] << 7) | frame[2]
            self.sent.append(("SEND_FROM_START", address))
            return buscodec.encode_reply(BusReplyId.FROM_START, address, self.sent_log[address])
        if len(frame) == 4 and frame[0] == BusCommand.SEND_CHANGES:
            address = (frame[1] << 7) | frame[2]
            if address in self.codes and address not in self.unplugged:
                self.sent_log[address] += buscodec.encode_changes(self.changes[address])
        return super().answer(frame)


def _e4_e5(chain: Chain, address: int) -> None:
    chain.move(address, square_index("e2"), 0)
    chain.move(address, square_index("e4"), 1)
    chain.move(address, square_index("e7"), 0)
    chain.move(address, square_index("e5"), 7)


def test_a_restarted_poller_hands_up_what_the_board_kept_with_its_dump_not_after_it():
    """The daemon was killed; meanwhile 1. e4 e5 was played on the board. The board
    kept those changes for the next SEND_CHANGES. They come with the first dump as its
    backlog; before, the dump came first and then the same changes as field updates,
    replaying the old position over the new one (an endless displaced_pieces alarm)."""
    chain = Chain([1025])
    first = BusPoller([1025], TIMINGS, discover=False)
    _, t = run(first, chain, 0.0, 1.0)
    _e4_e5(chain, 1025)  # while nobody reads the chain
    restarted = BusPoller([1025], TIMINGS, discover=False)
    events, _ = run(restarted, chain, t + 10, 1.0)
    assert [type(e) for e in events[:2]] == [BoardFound, BoardContents]
    contents = events[1]
    assert isinstance(contents, BoardContents) and contents.resync
    assert contents.dump.codes == tuple(codes_from_placement(AFTER_E4_E5))
    assert contents.backlog is not None
    kept = [(e.square, e.code) for e in EeMoves(contents.backlog).events()]
    assert kept == [(52, 0), (36, 1), (12, 0), (28, 7)]
    assert not [e for e in events if isinstance(e, BoardChanges)], "no stale updates"
    assert bus.backlog_history(START, contents.backlog, contents.dump.codes) == [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR",
        AFTER_E4,
        "rnbqkbnr/pppp1ppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR",
        AFTER_E4_E5,
    ]


def test_the_log_since_the_start_is_read_only_when_asked_and_only_then_sent():
    chain = LoggingChain([1025])
    poller = BusPoller([1025], TIMINGS, discover=False)
    _, t = run(poller, chain, 0.0, 1.0)
    _e4_e5(chain, 1025)
    _, t = run(poller, chain, t, 1.0)
    assert ("SEND_FROM_START", 1025) not in chain.sent
    poller.read_log(1025)
    events, _ = run(poller, chain, t, 0.5)
    logs = [e for e in events if isinstance(e, BoardLog)]
    assert len(logs) == 1 and logs[0].data is not None
    assert [(e.square, e.code) for e in EeMoves(logs[0].data).events()] == [
        (52, 0),
        (36, 1),
        (12, 0),
        (28, 7),
    ]
    frame = buscodec.encode_command(BusCommand.SEND_FROM_START, 1025)
    assert buscodec.check_bus_command(frame, from_start=True) == frame
    try:
        buscodec.check_bus_command(frame)
    except buscodec.UnsafeBusCommand:
        pass
    else:
        raise AssertionError("SEND_FROM_START went without being asked for")


def test_a_log_that_never_comes_is_given_up_without_losing_the_board():
    chain = Chain([1025])  # a board that does not answer SEND_FROM_START
    poller = BusPoller([1025], TIMINGS, discover=False)
    _, t = run(poller, chain, 0.0, 1.0)
    poller.read_log(1025)
    events, _ = run(poller, chain, t, 3.0)
    assert [e.data for e in events if isinstance(e, BoardLog)] == [None]
    assert 1025 in poller.present


def test_a_board_in_a_long_reply_log_is_framed_whole():
    data = buscodec.encode_changes([(i % 64, i % 13) for i in range(3000)])  # 6,000 bytes
    reply = buscodec.encode_reply(BusReplyId.FROM_START, 1025, data)
    parser = buscodec.BusReplyParser()
    items = [item for i in range(0, len(reply), 64) for item in parser.feed(reply[i : i + 64])]
    assert len(items) == 1 and isinstance(items[0], buscodec.BusReply) and items[0].valid
    assert items[0].data == data


# -- the link against the emulated chain, over a real pseudo-terminal ---------------------


async def _until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return bool(condition())


def _play(chain: BusChainEmulator, index: int, moves: list[tuple[str, str, str]]) -> None:
    for frm, to, piece in moves:
        chain.set_square_on(index, frm, None)
        chain.set_square_on(index, to, piece)


def _start(
    chain: BusChainEmulator, events: list, timings: BusTimings, expect: list[str] | None = None
) -> tuple[BusLink, asyncio.Task[None]]:
    """A link reading board 1025 of the chain (into ``events``) and 1026."""
    link = BusLink(chain.port_path, timings=timings, discover=False)
    link.add_board(1025, events.append)
    link.add_board(1026, lambda event: None)
    if expect is not None:
        link.expect_placements(1025, expect)
    return link, asyncio.create_task(link.run())


async def _read(
    chain: BusChainEmulator, expect: list[str] | None, until, then=None
) -> tuple[BusLink, list]:
    """A link (a daemon) reads the chain until ``until(events)``, then (``then``: an
    action and a second condition) goes on until that holds, and is closed."""
    events: list[SensorEvent] = []
    link, task = _start(chain, events, TIMINGS, expect)
    try:
        assert await _until(lambda: until(events)), events
        if then is not None:
            action, until_then = then
            action()
            assert await _until(lambda: until_then(events)), events
    finally:
        link.close()
        await asyncio.wait_for(task, 10)
    return link, events


def _dumps(events: list) -> list[BoardDump]:
    return [e for e in events if isinstance(e, BoardDump)]


async def test_a_restarted_link_recovers_the_moves_made_meanwhile_from_the_board(
    tmp_path: Path,
) -> None:
    """A daemon reading the chain is killed at the start position; 1. e4 e5 is played;
    the restarted link, told the resumed position, reports the board's dump with what
    it passed through (from the changes the board kept), and no field update after it
    replays 1. e4 e5 over the board that already shows it."""
    with BusChainEmulator(tmp_path, serials=["01025", "01026"]) as chain:
        await _read(chain, None, lambda events: _dumps(events))
        _play(chain, 0, [("e2", "e4", "P"), ("e7", "e5", "p")])  # the daemon is down
        link, events = await _read(chain, [START_PLACEMENT], lambda events: _dumps(events))
        await asyncio.sleep(0)
        dump = _dumps(events)[0]
        assert dump.placement == AFTER_E4_E5
        assert dump.history[-1] == AFTER_E4_E5 and AFTER_E4 in dump.history
        assert not [e for e in events if isinstance(e, SquareChange)], "replayed after the dump"
        assert link.boards[1025].recovered == 1 and link.boards[1025].log_reads == 0
        assert not chain.bus_forbidden


async def test_a_change_list_lost_with_the_killed_daemon_comes_back_from_the_log(
    tmp_path: Path,
) -> None:
    """The daemon read the lift of e2 and was killed before the move was decided (so
    its journal still has the start position): the board has already sent that
    change, so it is not in what the board kept. Its log since the start has it:
    the restarted link reads it (SEND_FROM_START) and the history is whole."""
    with BusChainEmulator(tmp_path, serials=["01025", "01026"]) as chain:
        lift = (
            lambda: chain.set_square_on(0, "e2", None),
            lambda events: any(isinstance(e, SquareChange) for e in events),
        )
        await _read(chain, None, _dumps, lift)  # the lift was read, then the daemon died
        chain.set_square_on(0, "e4", "P")  # the move's end, while nobody reads
        _play(chain, 0, [("e7", "e5", "p"), ("g1", "f3", "N")])
        link, events = await _read(chain, [START_PLACEMENT], lambda events: _dumps(events))
        dump = _dumps(events)[0]
        assert dump.placement == AFTER_E4_E5_NF3
        assert dump.history and dump.history[0] == "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR"
        assert AFTER_E4 in dump.history and AFTER_E4_E5 in dump.history
        assert link.boards[1025].log_reads == 1
        requests = [r.command for r in chain.bus_received if r.address == 1025]
        assert requests.count(BusCommand.SEND_FROM_START) == 1
        assert not chain.bus_forbidden


async def test_a_board_pulled_with_its_power_on_comes_back_with_the_moves_made_meanwhile(
    tmp_path: Path,
) -> None:
    events: list[SensorEvent] = []
    with BusChainEmulator(tmp_path, serials=["01025", "01026"]) as chain:
        link, task = _start(chain, events, TIMINGS)
        try:
            assert await _until(lambda: _dumps(events))
            chain.set_square_on(0, "e2", None)
            chain.set_square_on(0, "e4", "P")
            assert await _until(lambda: sum(isinstance(e, SquareChange) for e in events) == 2)
            chain.unplug_board(0, powered=True)
            assert await _until(lambda: not link.connected(1025))
            _play(chain, 0, [("e7", "e5", "p"), ("g1", "f3", "N")])
            chain.replug_board(0)
            assert await _until(lambda: len(_dumps(events)) == 2)
        finally:
            link.close()
            await asyncio.wait_for(task, 10)
    states = [e.state for e in events if isinstance(e, ConnectionChange)]
    assert states == ["lost", "connected"]
    dump = _dumps(events)[1]
    assert dump.placement == AFTER_E4_E5_NF3
    assert dump.history[0] == "rnbqkbnr/pppp1ppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
    assert AFTER_E4_E5 in dump.history
    after = events[events.index(dump) + 1 :]
    assert not [e for e in after if isinstance(e, SquareChange)]


async def test_bus_boards_are_heard_as_a_single_board_is_and_at_once_when_probed(
    tmp_path: Path,
) -> None:
    events: list[SensorEvent] = []
    timings = BusTimings(reply_timeout=0.3, discovery_interval=0, heard_interval=60.0)
    with BusChainEmulator(tmp_path, serials=["01025", "01026"]) as chain:
        link, task = _start(chain, events, timings)
        try:
            assert await _until(lambda: any(isinstance(e, BoardHeard) for e in events))
            heard = len([e for e in events if isinstance(e, BoardHeard)])
            await asyncio.sleep(0.5)
            assert len([e for e in events if isinstance(e, BoardHeard)]) == heard  # 60 s
            asked = link.time_source()
            link.probe(1025)
            assert await _until(
                lambda: len([e for e in events if isinstance(e, BoardHeard)]) > heard, 2
            )
            last = [e for e in events if isinstance(e, BoardHeard)][-1]
            assert last.t >= asked, "heard on a poll sent after the probe"
        finally:
            link.close()
            await asyncio.wait_for(task, 10)


def test_the_emulated_log_since_the_start_holds_what_was_sent_not_what_is_kept():
    chain = BusChainEmulator(serials=["01025"])
    board = chain.boards[0]
    board.set_code(square_index("e2"), 0)
    assert chain._reply(board, BusCommand.SEND_CHANGES) is not None
    board.set_code(square_index("e4"), 1)  # still to be sent with SEND_CHANGES
    events = EeMoves(board.from_start()).events()
    assert [(e.square, e.code) for e in events if isinstance(e, EePieceChange)] == [(52, 0)]


class ChangeAfterTheKeptList(BusChainEmulator):
    """A chain on which a piece is lifted just after each board sends what it kept
    (``lifts``): the change is in its dump, but neither in that list nor in its log
    since the start (which holds what was sent), only in its next change list."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lifts: dict[int, str] = {}

    def _reply(self, board, command):
        reply = super()._reply(board, command)
        index = self.boards.index(board)
        if command == BusCommand.SEND_CHANGES and index in self.lifts:
            board.set_code(square_index(self.lifts.pop(index)), 0)
        return reply


async def test_a_change_between_the_kept_list_and_the_dump_is_waited_for_on_a_busy_line(
    tmp_path: Path,
) -> None:
    """The daemon is killed; 1. e4 e5 is played on both boards; the restarted link
    finds them, and on each White's knight is lifted between its kept list and its
    dump. Neither the list nor the log leads to the dump: the link settles on the log
    and the changes after it. The other board's long log (an evening's) then held the
    line longer than the settling's 0.5 s of quiet: the board, never polled meanwhile,
    was settled with no history, and the game resumed on a search (after a longer
    outage, a lost game). The rest is confirmed by a poll."""
    with ChangeAfterTheKeptList(tmp_path, serials=["01025", "01026"]) as chain:
        for board in chain.boards:  # an evening of adjusted pieces: a long log
            board.log_ee(buscodec.encode_changes([(0, 0), (0, 8)] * 200))
        await _read(chain, None, _dumps)
        for index in (0, 1):
            _play(chain, index, [("e2", "e4", "P"), ("e7", "e5", "p")])  # the daemon is down
        chain.lifts = {0: "g1", 1: "g1"}
        events: dict[int, list[SensorEvent]] = {1025: [], 1026: []}
        link = BusLink(chain.port_path, timings=TIMINGS, discover=False)
        for address, into in events.items():
            link.add_board(address, into.append)
            link.expect_placements(address, [START_PLACEMENT])
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: all(_dumps(e) for e in events.values())), events
        finally:
            link.close()
            await asyncio.wait_for(task, 10)
    lifted = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKB1R"
    for address, into in events.items():
        dump = _dumps(into)[0]
        assert dump.placement == lifted
        assert dump.history and dump.history[-1] == lifted, address
        assert AFTER_E4 in dump.history and AFTER_E4_E5 in dump.history
        assert link.boards[address].log_reads == 1


def test_the_log_places_the_restart_where_the_board_showed_the_journals_position():
    """1. e4 e5 2. Be2 in the log since the start, the journal at the start position.
    Every tail from e2's lift on ends on the board when applied to the start, and so
    does the one from e4 on: e2 is covered by the bishop later. That shortest tail
    began with a pawn on e2 and on e4, which no line of moves follows (the restarted
    daemon lost the game). The history begins with e2 lifted."""
    steps = [("e2", 0), ("e4", 1), ("e7", 0), ("e5", 7), ("f1", 0), ("e2", 4)]
    data = buscodec.encode_changes([(square_index(s), code) for s, code in steps])
    after = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPPBPPP/RNBQK1NR"
    start = tuple(codes_from_placement(START_PLACEMENT))
    history = ee_history(EeMoves(data).events(), start, tuple(codes_from_placement(after)))
    assert history is not None and len(history) == len(steps)
    assert history[0] == "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR"
    assert history[1] == AFTER_E4 and history[-1] == after


async def test_a_board_lost_again_before_its_dump_is_recovered_from_what_it_showed_before():
    """A board lost (three polls unanswered on a loaded machine), found, and lost again
    before its dump came (issue 28's flaky hall test, under random pauses): what it
    showed when last known is still the start of what it passed through. Before, the
    second finding took the shadow the first had cleared for none, so the dump came
    with no history, the moves made meanwhile were searched for only four plies deep,
    and the game stood still behind a displaced-pieces alarm."""
    from drivers.dgt.bus import BoardAnswered, BoardLost
    from drivers.dgt.protocol import CODE_BY_PIECE, BoardDumpMessage

    events: list[SensorEvent] = []
    link = BusLink("/dev/no-chain-here", timings=TIMINGS, discover=False, settle_quiet=0.01)
    link.add_board(1025, events.append)
    t = time.monotonic()
    dump = BoardDumpMessage(codes_from_placement(START_PLACEMENT))
    link._dispatch([BoardFound(1025, t), BoardContents(1025, t, dump, False, True, b"")])
    assert [e.placement for e in _dumps(events)] == [START_PLACEMENT]
    link._dispatch([BoardLost(1025, t + 1, "no answer to SEND_CHANGES")])
    link._dispatch([BoardFound(1025, t + 2), BoardLost(1025, t + 3, "no answer to SEND_BRD")])
    moves = [("e2", None), ("e4", "P"), ("e7", None), ("e5", "p"), ("g1", None), ("f3", "N")]
    log = buscodec.encode_changes(
        [(square_index(s), CODE_BY_PIECE[p] if p else 0) for s, p in moves]
    )
    after = BoardDumpMessage(codes_from_placement(AFTER_E4_E5_NF3))
    link._dispatch([BoardFound(1025, t + 4), BoardContents(1025, t + 4, after, True, True, None)])
    assert link.poller.boards[1025].needs_log, "its log since the start is asked for"
    link._dispatch([BoardLog(1025, t + 5, log)])
    await asyncio.sleep(0.05)  # its hands at rest: a poll after that finds no change
    link._dispatch([BoardAnswered(1025, time.monotonic())])
    resumed = _dumps(events)[-1]
    assert resumed.placement == AFTER_E4_E5_NF3
    assert AFTER_E4 in resumed.history and AFTER_E4_E5 in resumed.history


async def test_a_board_back_after_an_outage_tells_its_clock_with_its_dump():
    """A board pulled out of the chain for 10 s: the presses made meanwhile were read
    with its clock while its dump was held, but not told. The rules core's clock
    stood as before the outage, the first press after it looked like none, and every
    later move was decided a press late, the game's last two never (issue 28's fault
    trials, ``chain_pull``). Its clock's last reading now follows its dump."""
    from drivers.dgt.bus import BoardAnswered, BoardClock, BoardLost
    from drivers.dgt.protocol import BoardDumpMessage, ClockSideTime, ClockTimes
    from drivers.sensors import ClockReading

    events: list[SensorEvent] = []
    link = BusLink("/dev/no-chain-here", timings=TIMINGS, discover=False, settle_quiet=0.01)
    link.add_board(1025, events.append)
    t = time.monotonic()
    start = BoardDumpMessage(tuple(codes_from_placement(START_PLACEMENT)))
    link._dispatch([BoardFound(1025, t), BoardContents(1025, t, start, False, True, b"")])
    link._dispatch([BoardLost(1025, t + 0.1, "no answer to SEND_CHANGES")])
    kept = buscodec.encode_changes([(square_index("e2"), 0), (square_index("e4"), 1)])  # 1. e4
    after = BoardDumpMessage(tuple(codes_from_placement(AFTER_E4)))
    side = ClockSideTime(0, 5, 0, False, False, False)
    black_to_move = ClockTimes(side, side, True, True, False, True, False, False, bytes(7))
    link._dispatch(
        [
            BoardFound(1025, t + 0.2),
            BoardContents(1025, t + 0.2, after, False, True, kept),
            BoardClock(1025, t + 0.3, black_to_move),  # White's press, read while held
        ]
    )
    assert not [e for e in events if isinstance(e, ClockReading)], "held with the dump"
    await asyncio.sleep(0.05)  # its hands at rest: a poll after that finds no change
    link._dispatch([BoardAnswered(1025, time.monotonic())])
    dump_at = max(i for i, e in enumerate(events) if isinstance(e, BoardDump))
    assert events[dump_at].placement == AFTER_E4
    told = [e for e in events[dump_at + 1 :] if isinstance(e, ClockReading)]
    assert len(told) == 1 and told[0].t >= events[dump_at].t
