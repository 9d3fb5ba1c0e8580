"""A board reading a blind player can have in blitz (issue 27): asked at move 15,
read in the gaps between moves, resumed where it stopped, never given up because
moves came, and never left with one colour unread; every move still heard in full
(with the opponent's moves said, as in the blind player's own earphone, and with
both sides said: the whole reading within the game).
Also the order he asks for: his own pieces, the opponent's, one rank or one file.

Real espeak-ng WAV lengths, simulated time (daemon.speech.simulation), as
test_schedule_timing.py; the figures over many games: benchmarks/speech_schedule.py.
"""

from __future__ import annotations

import json
import random
import shutil

import chess
import pytest

from daemon.game.record import GameRecord
from daemon.speech.answers import answer, answer_phrases
from daemon.speech.settings import SpeechSettings
from daemon.speech.simulation import EspeakDurations, game_timeline, simulate, standard_games
from daemon.speech.vocabulary import load_vocabulary

DE = load_vocabulary("appendix-e")


@pytest.fixture(scope="module")
def games(shared) -> list[list[str]]:
    return standard_games(shared / "data" / "games.pgn", 4, min_plies=70)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")
@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize(
    "sides", [("white", "black"), ("black",)], ids=["both sides", "opponent only"]
)
def test_a_full_board_reading_at_move_15_in_blitz_is_heard_whole_within_the_game(
    games, index, sides
) -> None:
    game = games[index]
    rng = random.Random(11 + index)
    events = game_timeline(game, [rng.uniform(1.0, 3.0) for _ in game])
    asked = next(t for t, event in events if event.get("ply") == 29)  # 15. White
    events.append((asked, {"t": asked, "type": "info_request", "what": "board", "by": "white"}))
    events.sort(key=lambda pair: pair[0])
    run = simulate(events, SpeechSettings(engine="text", sides=sides), DE, EspeakDurations("de"))
    lags = run.lags()
    assert sorted(lags) == sorted(run.move_times)  # every move heard in full
    assert all(o["outcome"] == "heard" for o in run.outcomes if o["kind"] != "answer")
    # Nothing given up. Only a reading's phrase said beyond the gap may be cut, by a
    # move that came meanwhile (said at once), and that phrase is said again whole.
    assert {o["outcome"] for o in run.outcomes if o["kind"] == "answer"} <= {"heard", "cut"}
    reading = [h for h in run.heard if h.phrase.kind == "answer"]
    text = " ".join(h.phrase.written for h in reading)
    assert "Weiß:" in text and "Schwarz:" in text  # both colours read
    assert reading[-1].phrase.key.startswith("black:") and reading[-1].phrase.last
    assert not any("abgebrochen" in h.phrase.written for h in run.heard)
    for cut in run.cut:  # said again whole after the move that cut it
        keys = set(cut.phrase.keys)
        assert any(keys <= set(h.phrase.keys) and h.start >= cut.end for h in reading)
    # The whole reading within the game: with the opponent's moves said (the blind
    # White's own earphone), in his thinking time; with both sides said, in the
    # 1-3 s between any two moves, a square or two at a time.
    assert reading[-1].end <= max(run.move_times.values())
    assert max(run.answer_phrases_before(ply) for ply in run.move_times) <= 1
    assert max(lags.values()) < 2.0  # no move held up for long (p99 target 1.5 s)


def position(sans: str) -> GameRecord:
    record = GameRecord()
    board = chess.Board()
    record.apply({"t": 0.0, "type": "game_start", "fen": board.fen()})
    for ply, san in enumerate(sans.split(), 1):
        move = board.parse_san(san)
        by = "white" if board.turn == chess.WHITE else "black"
        board.push(move)
        record.apply(
            {"t": float(ply), "type": "move", "ply": ply, "uci": move.uci(), "san": san,
             "fen": board.fen(), "by": by, "speech": "?"}
        )  # fmt: skip
    return record


def test_a_board_reading_in_the_order_the_player_asks_for() -> None:
    record = position("e4 e5 Nf3")
    own = answer("board", {"order": "own"}, record, DE, by="black")
    assert own.startswith("Schwarz: Koenig Eva acht") and "Weiß" not in own
    opponent = answer("board", {"order": "opponent"}, record, DE, by="black")
    assert opponent.startswith("Weiß: Koenig Eva eins") and "Schwarz" not in opponent
    assert answer("board", {}, record, DE, by="black").startswith("Schwarz:")  # his own first
    rank = answer("board", {"rank": "4"}, record, DE)
    assert rank == "Weiß: Bauer Eva vier"
    file = answer("board", {"file": "f"}, record, DE)
    assert file == (
        "Weiß: Laeufer Felix eins. Springer Felix drei. Bauer Felix zwei."
        " Schwarz: Laeufer Felix acht. Bauer Felix sieben"
    )
    keys = [p[0] for p in answer_phrases("board", {"order": "own"}, record, DE, by="white")]
    assert keys[0] == "white:K:0" and all(k.startswith("white:") for k in keys)


def test_say_board_takes_the_order(tmp_path, capsys) -> None:
    from daemon.cli import main

    events = tmp_path / "game.jsonl"
    board = chess.Board()
    lines = [json.dumps({"t": 0.0, "type": "game_start", "fen": board.fen()})]
    board.push(board.parse_san("e4"))
    lines.append(
        json.dumps(
            {
                "t": 1.0,
                "type": "move",
                "ply": 1,
                "uci": "e2e4",
                "san": "e4",
                "fen": board.fen(),
                "by": "white",
                "speech": "?",
            }
        )
    )
    events.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["say", "board", "rank", "4", "--events", str(events), "--engine", "text"]) == 0
    assert capsys.readouterr().out == "Weiß: Bauer Eva vier\n"
    assert main(["say", "board", "opponent", "--by", "white", "--events", str(events),
                 "--engine", "text"]) == 0  # fmt: skip
    assert capsys.readouterr().out.startswith("Schwarz: Koenig Eva acht")
    assert main(["say", "board", "sideways", "--events", str(events), "--engine", "text"]) == 2
    assert "say board own, opponent" in capsys.readouterr().err
