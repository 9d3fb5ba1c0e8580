"""Moves made while the board was out of reach, recovered (or the arbiter asked).

The link reports a loss, nothing while the board is away, then ``connected`` and a
whole picture, with the placements the board's EEPROM log passed through when it
has one (``BoardDump.history``). The rules core recovers the moves made meanwhile
from that log, or by a search for the one line of legal moves to the picture;
when several lines lead there it says so, and never guesses. Nothing is decided
on the last picture before the loss.
"""

from __future__ import annotations

import time
from dataclasses import replace

import chess
import pytest

from daemon.rules import RulesSettings
from drivers.sensorlog import read_events
from drivers.sensors import (
    BoardDump,
    BoardHeard,
    ClockReport,
    ConnectionChange,
    SensorEvent,
    SquareChange,
)
from drivers.simulators.handling import Hands, human_sensor_log
from tests.rules.rules_support import kinds, of_type, played, run

RUY_LOPEZ = "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1 b7b5 a4b3 d7d6"


def presses(log: list[SensorEvent]) -> list[int]:
    """Indices of the clock reports that are presses (the running side changes)."""
    found, running = [], None
    for index, event in enumerate(log):
        if isinstance(event, ClockReport) and event.running is not None:
            if running is not None and event.running != running:
                found.append(index)
            running = event.running
    return found


def with_outage(
    log: list[SensorEvent], first: int, last: int, *, eeprom: bool, before_press: bool = False
) -> list[SensorEvent]:
    """``log`` as the link reports it when the board is out of reach from just after
    press ``first`` (or, ``before_press``, just before it: the move stands, unpressed)
    to just after press ``last``: the moves between happen unseen."""
    marks = presses(log)
    cut, back = marks[first] + (0 if before_press else 1), marks[last] + 1
    board = chess.BaseBoard(next(e for e in log if isinstance(e, BoardDump)).placement)
    history = []
    for event in log[:back]:
        if isinstance(event, BoardDump):
            board = chess.BaseBoard(event.placement)
        elif isinstance(event, SquareChange):
            square = chess.parse_square(event.square)
            if event.piece:
                board.set_piece_at(square, chess.Piece.from_symbol(event.piece))
            else:
                board.remove_piece_at(square)
        if event in log[cut:back] and isinstance(event, SquareChange):
            history.append(board.board_fen())
    lost_at, back_at = log[cut].t, log[back].t
    clock = log[marks[last]]
    return [
        *log[:cut],
        ConnectionChange(lost_at, "lost", "read error"),
        ConnectionChange(back_at, "connected", "/dev/ttyACM0"),
        BoardDump(back_at, board.board_fen(), tuple(history) if eeprom else ()),
        replace(clock, t=back_at + 0.1),  # the clock's times, asked for at start-up
        *log[back:],
    ]


def ruy_lopez_log(seed: int = 3) -> tuple[list[chess.Move], list[SensorEvent]]:
    moves = [chess.Move.from_uci(u) for u in RUY_LOPEZ.split()]
    return moves, human_sensor_log(chess.Board(), moves, seed=seed, with_clock=True)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_three_moves_made_during_an_outage_come_back_from_the_boards_log(seed: int) -> None:
    """A Bluetooth drop for three moves (Nc6 Bb5 a6, presses included): the board's
    EEPROM log gives the line, every move is recorded in order, and the game goes
    on with each later move at its press."""
    moves, log = ruy_lopez_log(seed)
    out = run(with_outage(log, 2, 5, eeprom=True))
    assert played(out) == [m.uci() for m in moves]
    [recovered] = of_type(out, "moves_recovered")
    # a6, the line's last, with Black's clock last seen running: decided at the
    # first report after the outage (White's clock runs: Black pressed)
    assert (recovered.moves, recovered.how) == (["b8c6", "f1b5"], "eeprom")
    assert recovered.san == "2...Nc6 3. Bb5"
    assert kinds(out) == []


def test_a_move_standing_unpressed_when_the_link_went_is_part_of_the_line() -> None:
    """The link goes with Nf3 on the board, its press not yet seen: the board's log
    starts after it, so the picture at the loss opens the line (Nf3 Nc6 Bb5 a6)."""
    moves, log = ruy_lopez_log()
    out = run(with_outage(log, 2, 5, eeprom=True, before_press=True))
    assert played(out) == [m.uci() for m in moves]
    [recovered] = of_type(out, "moves_recovered")
    assert (recovered.moves, recovered.how) == (["g1f3", "b8c6", "f1b5", "a7a6"], "eeprom")
    assert kinds(out) == []


def test_without_the_boards_log_a_line_that_transposes_asks_the_arbiter() -> None:
    """The same outage on a board without an EEPROM log: Nc6 Bb5 a6 and a6 Bb5 Nc6
    lead to the same position. Nothing is guessed: the arbiter is told both lines,
    and the board counts as displaced pieces until the arbiter sets it right."""
    moves, log = ruy_lopez_log()
    out = run(with_outage(log, 2, 5, eeprom=False))
    assert played(out)[:3] == [m.uci() for m in moves[:3]]
    [recovered] = of_type(out, "moves_recovered")
    assert recovered.how == "ambiguous" and recovered.moves == []
    assert "2...Nc6 3. Bb5 a6" in recovered.candidates
    assert "2...a6 3. Bb5 Nc6" in recovered.candidates
    [notice] = [e for e in of_type(out, "notice") if e.code == "moves_not_recovered"]
    assert "arbiter" in notice.message
    assert ("displaced_pieces", "7.3") in kinds(out)


def test_without_the_boards_log_the_only_line_is_found_by_search() -> None:
    """Two moves made during the outage (Ba4 Nf6): no other line leads there."""
    moves, log = ruy_lopez_log()
    out = run(with_outage(log, 5, 7, eeprom=False))
    assert played(out) == [m.uci() for m in moves]
    [recovered] = of_type(out, "moves_recovered")
    assert (recovered.moves, recovered.how) == (["b5a4", "g8f6"], "search")
    assert kinds(out) == []


def test_no_alarm_is_decided_on_the_last_picture_before_the_loss() -> None:
    """No clock. The link goes just as White's knight stands on g3 (a slip of the
    hand, g1-g3 is no move): the settle time passes with the board out of reach, and
    nothing is decided on that picture. When the board is back the knight stands on
    f3: the move, and no illegal move."""
    hands = Hands(chess.Board(), seed=1, with_clock=False)
    for uci in ("e2e4", "e7e5"):
        hands.think()
        hands.play(chess.Move.from_uci(uci), {"plain"})
    hands.think()
    hands.lift(chess.G1)
    hands.wait(0.3)
    hands.put(chess.G3, "N")
    t = hands.t
    hands.events.append(ConnectionChange(t + 0.05, "lost", "read error"))
    hands.wait(3.0)  # the hand goes on while the board is out of reach
    hands.lift(chess.G3)
    hands.put(chess.F3, "N")
    unseen = hands.events.pop(), hands.events.pop()  # the link saw neither
    assert all(isinstance(e, SquareChange) for e in unseen)
    hands.wait(2.0)
    hands.events.append(ConnectionChange(hands.t, "connected", "/dev/ttyACM0"))
    hands.dump()
    out = run(hands.events)
    assert kinds(out) == []
    assert played(out) == ["e2e4", "e7e5", "g1f3"]


def test_recovery_never_picks_one_of_several_lines() -> None:
    from daemon.rules.recovery import recover

    board = chess.Board()
    target = board.copy()
    for uci in ("g1f3", "g8f6", "e2e4"):
        target.push_uci(uci)
    found = recover(board, target.board_fen())
    assert found.how == "ambiguous" and not found.moves
    assert len(found.candidates) == 2  # Nf3 first or e4 first


def test_recovery_is_quick_enough_for_the_board_link() -> None:
    """Four plies deep from a middlegame position: a few tenths of a second at most
    on a loaded machine (the budget bounds it whatever happens)."""
    from daemon.rules.recovery import recover

    moves, _ = ruy_lopez_log()
    board = chess.Board()
    for move in moves[:10]:
        board.push(move)
    target = board.copy()
    for move in moves[10:14]:
        target.push(move)
    started = time.process_time()
    found = recover(board, target.board_fen())
    assert found.how in ("search", "ambiguous", "gave_up")
    assert found.nodes <= 30_001
    assert time.process_time() - started < 10


def test_a_hand_re_centring_its_piece_after_an_outage_binds_nobody() -> None:
    """Nc6 Bb5 a6 made while the board was away, recovered from its log. When the board
    is back, Black's hand re-centres the pawn on a6 (lifted and set down at once), a
    while after the picture: when Black let go of a6 is unknown, so this is no White
    touch of a6 (4.3), and White's Ba4 (his bishop could take a6) is no touch_move."""
    moves, log = ruy_lopez_log()
    events = with_outage(log, 2, 5, eeprom=True)
    dump = next(i for i, e in enumerate(events) if isinstance(e, BoardDump) and e.history)
    back_at = events[dump].t
    later = [replace(e, t=e.t + 3.0) for e in events[dump + 2 :]]
    events = [
        *events[: dump + 2],
        SquareChange(back_at + 1.5, "a6", None),
        SquareChange(back_at + 1.7, "a6", "p"),
        *later,
    ]
    out = run(events)
    assert played(out) == [m.uci() for m in moves]
    assert kinds(out) == []


#: Fault trial silent #7 (``python -m benchmarks.faults --kinds unplug,unplug_no_eeprom,
#: silent --trials 8 --seed 16``: Pillsbury-Moll, 1. e4 e5 2. f4 Bc5), as the daemon's
#: link reported it at the trial's 10x speed (settle time 0.06 s). Black sets the bishop
#: down on c5 before f8 is seen empty, and the board goes silent at once; Bc5's press
#: and 3. Nf3 are made unseen. The link heard the board (its liveness probe answered)
#: once a second, last with the c5 update; it reports the loss 3.5 s later, and after
#: the reconnection the board's log gives what it passed through.
SILENT_AFTER_A_HALF_SEEN_MOVE = """
{"t": 0.0, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}
{"t": 0.01, "clock": {"white": 5400.0, "black": 5400.0, "running": "white"}}
{"t": 0.02, "heard": true}
{"t": 0.1944, "square": "e2", "piece": null}
{"t": 0.2356, "square": "e4", "piece": "P"}
{"t": 0.2784, "clock": {"white": 5427.3, "black": 5400.0, "running": "black"}}
{"t": 0.4235, "square": "e7", "piece": null}
{"t": 0.4663, "square": "e5", "piece": "p"}
{"t": 0.5109, "clock": {"white": 5427.3, "black": 5427.7, "running": "white"}}
{"t": 0.5235, "square": "f2", "piece": null}
{"t": 0.5615, "square": "f4", "piece": "P"}
{"t": 0.5941, "clock": {"white": 5456.5, "black": 5427.7, "running": "black"}}
{"t": 0.6835, "square": "c5", "piece": "b"}
{"t": 4.1835, "connection": "lost", "detail": "no answer from the board for 3.5 s"}
{"t": 4.45, "connection": "connected", "detail": "/dev/pts/3"}
{"t": 4.47, "board": "rnbqk1nr/pppp1ppp/8/2b1p3/4PP2/5N2/PPPP2PP/RNBQKB1R", "history": [\
"rnbqk1nr/pppp1ppp/8/2b1p3/4PP2/8/PPPP2PP/RNBQKBNR", \
"rnbqk1nr/pppp1ppp/8/2b1p3/4PP2/8/PPPP2PP/RNBQKB1R", \
"rnbqk1nr/pppp1ppp/8/2b1p3/4PP2/5N2/PPPP2PP/RNBQKB1R"]}
{"t": 4.49, "clock": {"white": 5485.0, "black": 5456.2, "running": "black"}}
{"t": 5.02, "heard": true}
{"t": 5.1, "square": "d7", "piece": null}
{"t": 5.14, "square": "d6", "piece": "p"}
{"t": 5.17, "clock": {"white": 5485.0, "black": 5484.9, "running": "white"}}
{"t": 6.02, "heard": true}
"""

TRIAL_SETTINGS = RulesSettings(settle_time=0.06)


def test_no_alarm_on_the_picture_before_a_silent_boards_loss() -> None:
    """A silent board is known lost only at the link's liveness time-out, seconds
    after its last picture: a half-seen move on that picture (two black bishops, f8
    not yet seen empty) is no displaced pieces. The moves come back from the board's
    log when it is heard again, and the game goes on."""
    out = run(read_events(SILENT_AFTER_A_HALF_SEEN_MOVE.splitlines()), TRIAL_SETTINGS)
    assert kinds(out) == []
    [recovered] = of_type(out, "moves_recovered")
    assert (recovered.moves, recovered.how) == (["f8c5", "g1f3"], "eeprom")
    assert played(out) == ["e2e4", "e7e5", "f2f4", "f8c5", "g1f3", "d7d6"]


def test_a_displacement_the_board_still_shows_when_heard_again_is_alarmed() -> None:
    """The same picture on a board that answers on: the alarm waits for the board to
    be heard after the settle time, then is decided on the picture it confirms."""
    lines = SILENT_AFTER_A_HALF_SEEN_MOVE.splitlines()
    upto = next(i for i, line in enumerate(lines) if '"c5"' in line)
    events = [*read_events(lines[: upto + 1]), BoardHeard(1.02)]
    out = run(events, TRIAL_SETTINGS)
    [alarm] = of_type(out, "irregularity")
    assert alarm.kind == "displaced_pieces"  # type: ignore[attr-defined]
    assert alarm.restore == [{"square": "c5", "piece": None}]  # type: ignore[attr-defined]
    held = run(events[:-1], TRIAL_SETTINGS)  # not heard since: nothing decided yet
    assert kinds(held) == []


def test_a_board_back_as_it_was_leaves_no_outage_open_for_later() -> None:
    """A USB cable pulled and put back before the first move, nothing moved
    meanwhile: the game that follows is judged exactly as if the link had never gone.
    (The outage stayed open while the board showed what it showed at the loss; the
    first picture later that no move explained, here a rook knocked off the board
    after move 10, then ran the outage's search over every placement since,
    seconds of the event loop on a loaded machine, and told the arbiter moves were
    made while the board was out of reach: issue 28's flaky hall test.)"""
    moves = [chess.Move.from_uci(u) for u in (RUY_LOPEZ + " c2c3 e8g8 h2h3 c8b7 d2d4 f8e8").split()]
    log = human_sensor_log(chess.Board(), moves, seed=3, with_clock=True)
    end = log[-1].t
    log += [SquareChange(end + 5, "a1", None), SquareChange(end + 20, "a1", "R")]
    first = next(i for i, e in enumerate(log) if isinstance(e, SquareChange))
    pulled = log[first].t - 0.5
    outage = [
        ConnectionChange(pulled, "lost", "port closed by the board (end of file)"),
        ConnectionChange(pulled + 0.1, "connected", "/dev/ttyACM0"),
        BoardDump(pulled + 0.1, chess.Board().board_fen()),
    ]
    unbroken = run(log)
    out = run([*log[:first], *outage, *log[first:]])
    assert played(out) == [m.uci() for m in moves]
    assert not of_type(out, "moves_recovered")
    assert not [e for e in of_type(out, "notice") if e.code == "moves_not_recovered"]
    assert [e.type for e in out if e.t > pulled + 0.1] == [
        e.type for e in unbroken if e.t > pulled + 0.1
    ]
