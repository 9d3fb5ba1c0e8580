"""Two boards, one game (Appendix E.1, E.2.7), on simulated time: moves read on the
mover's board, the repetition watched on the other, ``boards_diverged`` with what to
correct per player, ``boards_agree`` when they match again."""

from __future__ import annotations

import chess

from daemon.boards.twoboards import TwoBoardGame
from daemon.rules import RulesCore, RulesSettings
from drivers.sensors import BoardDump, SensorEvent, SquareChange

START = chess.Board().board_fen()
SIGHTED, BLIND = "1", "1b"  # White moves on board 1, the blind Black on his own board


class Pair:
    """The game's rules core behind the two-board router, time moved by hand."""

    def __init__(self, diverge_after: float = 15.0) -> None:
        self.core = RulesCore(RulesSettings(use_clock=False, settle_time=0.6))
        self.game = TwoBoardGame({"white": SIGHTED, "black": BLIND}, diverge_after=diverge_after)
        self.t = 0.0
        self.feed: list[dict] = []
        self.core_saw: list[SensorEvent] = []

    def at(self, t: float) -> Pair:
        """Let time run to ``t``: the core's and the router's timers fire in order."""
        while True:
            due = [d for d in (self.core.next_deadline(), self.game.next_deadline()) if d]
            due = [d for d in due if d <= t]
            if not due:
                break
            now = min(due)
            self.t = max(self.t, now)
            self._decided(self.core.tick(now) if self.core.next_deadline() == now else [])
            self._router(self.game.tick(now))
        self.t = t
        return self

    def sense(self, board: str, event: SensorEvent) -> Pair:
        self.at(event.t)
        for fed in self.game.sensor(board, event):
            self._to_core(fed)
        self._router(self.game.tick(event.t))
        return self

    def move(self, board: str, t: float, frm: str, to: str, piece: str) -> Pair:
        self.sense(board, SquareChange(t, frm, None))
        return self.sense(board, SquareChange(t + 0.3, to, piece))

    def _to_core(self, event: SensorEvent) -> None:
        self.core_saw.append(event)
        self._decided(self.core.judge(event))

    def _decided(self, events) -> None:
        for event in events:
            data = event.to_dict()
            self.feed.append(data)
            for fed in self.game.game_event(event):
                self._to_core(fed)

    def _router(self, events) -> None:
        self.feed.extend(e.to_dict() for e in events)

    def moves(self) -> list[str]:
        return [e["uci"] for e in self.feed if e["type"] == "move"]

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.feed if e["type"] == kind or e.get("kind") == kind]


def started() -> Pair:
    pair = Pair()
    pair.sense(SIGHTED, BoardDump(0.0, START)).sense(BLIND, BoardDump(0.0, START))
    return pair.at(2.0)


def test_each_move_is_read_on_the_board_of_the_player_who_makes_it():
    pair = started()
    pair.move(SIGHTED, 3.0, "e2", "e4", "P").at(5.0)  # White moves on his board
    pair.move(BLIND, 8.0, "e2", "e4", "P").at(10.0)  # the blind player repeats it
    pair.move(BLIND, 14.0, "c7", "c5", "p").at(16.0)  # and makes his own move
    pair.move(SIGHTED, 20.0, "c7", "c5", "p").at(22.0)  # repeated on the sighted board
    pair.move(SIGHTED, 25.0, "g1", "f3", "N").at(28.0)
    assert pair.moves() == ["e2e4", "c7c5", "g1f3"]
    assert pair.of("boards_diverged") == [] and pair.of("boards_agree") == []
    # The repetitions never reached the core as moves of their own.
    assert not any(e["type"] == "irregularity" for e in pair.feed)


def test_a_late_repetition_is_reported_after_the_time_a_repetition_takes_then_agreed():
    pair = started()
    pair.move(SIGHTED, 3.0, "e2", "e4", "P").at(17.0)  # 14 s: still within the time
    assert pair.of("boards_diverged") == []
    pair.at(19.5)  # the blind player's board still shows e2: 15 s passed
    (diverged,) = pair.of("boards_diverged")
    assert diverged["article"] == "E.2.7" and diverged["by"] == "black"
    assert sorted(diverged["squares"]) == ["e2", "e4"]
    # What the blind player must correct on his own board, the piece to put first.
    assert diverged["restore"] == [{"square": "e4", "piece": "P"}, {"square": "e2", "piece": None}]
    pair.move(BLIND, 25.0, "e2", "e4", "P").at(27.0)
    assert len(pair.of("boards_agree")) == 1
    pair.move(BLIND, 30.0, "e7", "e5", "p").at(32.0)  # his move is read on his board
    assert pair.moves() == ["e2e4", "e7e5"]


def test_a_wrong_repetition_tells_the_blind_player_what_to_correct_and_no_move_is_read():
    pair = started()
    pair.move(SIGHTED, 3.0, "g1", "f3", "N").at(5.0)
    pair.move(BLIND, 7.0, "g1", "h3", "N").at(9.0)  # repeated on the wrong square
    pair.move(BLIND, 10.0, "g8", "f6", "n").at(12.0)  # his own move meanwhile
    assert pair.moves() == ["g1f3"], "a move on a board that lags is not read"
    pair.at(25.0)
    (diverged,) = pair.of("boards_diverged")
    assert diverged["by"] == "black"
    assert sorted(diverged["squares"]) == ["f3", "f6", "g8", "h3"]
    assert diverged["restore"] == [
        {"square": "f3", "piece": "N"},
        {"square": "g8", "piece": "n"},
        {"square": "h3", "piece": None},
        {"square": "f6", "piece": None},
    ]
    # He puts it right as told, then makes his move again: it is read, boards agree.
    for t, (square, piece) in enumerate(
        [("h3", None), ("f3", "N"), ("f6", None), ("g8", "n")], start=26
    ):
        pair.sense(BLIND, SquareChange(float(t), square, piece))
    pair.at(31.0)
    assert len(pair.of("boards_agree")) == 1
    pair.move(BLIND, 32.0, "g8", "f6", "n").at(34.0)
    assert pair.moves() == ["g1f3", "g8f6"]


def test_an_illegal_move_is_judged_on_the_board_where_it_is_made():
    pair = started()
    pair.move(SIGHTED, 3.0, "e2", "e4", "P").at(5.0)
    pair.move(BLIND, 7.0, "e2", "e4", "P").at(9.0)
    pair.move(BLIND, 10.0, "d8", "d5", "q").at(12.0)  # not a legal move
    illegal = [e for e in pair.feed if e.get("kind") == "illegal_move"]
    assert illegal and illegal[0]["by"] == "black"
    # The sighted board saw nothing of it: no divergence is claimed for it.
    assert all(e.get("kind") != "boards_diverged" or e["by"] != "white" for e in pair.feed)


def test_a_board_seen_again_only_after_its_players_move_is_read_there():
    """The blind player's board, out of reach (or a restarted daemon's) while he
    repeated 1. e4 and replied 1...e5, is seen again showing both: his move is read
    there at once. Before, the game stayed on the sighted board, the move counted
    only once repeated there, and his own board was reported as diverging."""
    pair = started()
    pair.move(SIGHTED, 3.0, "e2", "e4", "P").at(5.0)
    after_e5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR"
    pair.sense(BLIND, BoardDump(8.0, after_e5)).at(10.0)
    assert pair.moves() == ["e2e4", "e7e5"]
    pair.at(30.0)  # the sighted player takes his time to repeat it: that is his to fix
    pair.move(SIGHTED, 31.0, "e7", "e5", "p").at(33.0)
    pair.move(SIGHTED, 34.0, "g1", "f3", "N").at(36.0)
    assert pair.moves() == ["e2e4", "e7e5", "g1f3"]
    assert [d["by"] for d in pair.of("boards_diverged")] == ["white"]
