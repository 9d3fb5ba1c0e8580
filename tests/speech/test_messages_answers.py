"""Irregularities with their fix, game events, and the answers to requests."""

from __future__ import annotations

import chess
import pytest

from daemon.game.events import FlagFall, GameEnd, GameResumed, Irregularity, PositionRestored
from daemon.game.record import GameRecord
from daemon.speech.answers import answer, answer_phrases
from daemon.speech.messages import event_phrases, event_text
from daemon.speech.schedule import Announcement, SpeechSchedule
from daemon.speech.vocabulary import load_vocabulary


@pytest.fixture(scope="module")
def de():
    return load_vocabulary("appendix-e")


@pytest.fixture(scope="module")
def en():
    return load_vocabulary("en")


def play(sans: list[str], clock: tuple[float, float] | None = None) -> GameRecord:
    """A record folded from the events the rules core would emit for ``sans``."""
    record = GameRecord()
    board = chess.Board()
    record.apply({"t": 0.0, "type": "game_start", "fen": board.fen()})
    for ply, san in enumerate(sans, 1):
        move = board.parse_san(san)
        by = "white" if board.turn == chess.WHITE else "black"
        board.push(move)
        record.apply(
            {"t": float(ply), "type": "move", "ply": ply, "uci": move.uci(), "san": san,
             "fen": board.fen(), "by": by, "speech": "?"}
        )  # fmt: skip
    if clock:
        record.apply(
            {"t": 99.0, "type": "clock", "white": clock[0], "black": clock[1], "running": None}
        )
    return record


def test_illegal_move_says_how_to_take_it_back(de, en) -> None:
    event = Irregularity(
        t=3.0, kind="illegal_move", article="7.4", by="white", squares=["g1", "e5"],
        restore=[{"square": "g1", "piece": "N"}, {"square": "e5", "piece": None}],
    ).to_dict()  # fmt: skip
    assert event_text(event, de) == "Weiß: Unmöglicher Zug. Springer zurück auf Gustav eins"
    assert event_text(event, en) == "White: illegal move. Knight back to Golf one"


def test_illegal_move_count_and_a_captured_piece_to_put_back(de) -> None:
    event = Irregularity(
        t=3.0, kind="illegal_move", article="7.4", by="white", squares=["d1", "d7"], count=2,
        restore=[{"square": "d1", "piece": "Q"}, {"square": "d7", "piece": "p"}],
    ).to_dict()  # fmt: skip
    assert event_text(event, de) == (
        "Weiß: Unmöglicher Zug. Dame zurück auf David eins, Bauer Schwarz zurück auf David"
        " sieben."
        " Unmögliche Züge Weiß: 2"
    )


def test_an_irregularity_is_said_in_phrases_its_fixes_marked(de) -> None:
    """Each sentence is a phrase, a long fix list three items at a time, so a move
    can take its turn at the next boundary; the fixes are marked (a later move
    shows the board was put right)."""
    event = Irregularity(
        t=3.0, kind="illegal_move", article="7.4", by="white", squares=["d1", "d7"], count=2,
        restore=[{"square": "d1", "piece": "Q"}, {"square": "d7", "piece": "p"}],
    ).to_dict()  # fmt: skip
    assert event_phrases(event, de) == [
        ("Weiß: Unmöglicher Zug", False),
        ("Dame zurück auf David eins, Bauer Schwarz zurück auf David sieben", True),
        ("Unmögliche Züge Weiß: 2", False),
    ]
    setup = Irregularity(
        t=0.0, kind="wrong_setup", article="", by=None, squares=[],
        restore=[{"square": s, "piece": "P"} for s in ("a2", "b2", "c2", "d2", "e2")],
    ).to_dict()  # fmt: skip
    phrases = event_phrases(setup, de)
    assert phrases == [
        ("Grundstellung falsch: Bauer Weiß auf Anna zwei, Bauer Weiß auf Bella zwei,"
         " Bauer Weiß auf Cesar zwei", False),
        ("Bauer Weiß auf David zwei, Bauer Weiß auf Eva zwei", True),
    ]  # fmt: skip
    # The written text is the whole message, as before.
    assert event_text(setup, de) == ", ".join(text for text, _ in phrases)
    assert event_phrases(FlagFall(t=1, side="black").to_dict(), de) == [
        ("Zeit abgelaufen: Schwarz", False)
    ]


def test_displaced_piece_and_square_to_clear(de) -> None:
    displaced = Irregularity(
        t=1.0, kind="displaced_pieces", article="7.3", by=None, squares=["a1", "a2"],
        restore=[{"square": "a1", "piece": "R"}, {"square": "a2", "piece": None}],
    ).to_dict()  # fmt: skip
    assert (
        event_text(displaced, de) == "Figur verschoben: Turm Weiß auf Anna eins, Anna zwei räumen"
    )


def test_touch_move_names_the_touched_piece_and_counts(de) -> None:
    board = chess.Board()
    event = Irregularity(
        t=1.0, kind="touch_move", article="4.3", by="white", squares=["g1"], count=1
    ).to_dict()
    assert event_text(event, de, board) == (
        "Berührt, geführt: Springer Gustav eins zuerst berührt, musste ziehen."
        " Berührungen Weiß: 1. Reklamation beim Schiedsrichter möglich"
    )


def test_game_events(de, en) -> None:
    assert event_text(PositionRestored(t=1, fen=chess.STARTING_FEN).to_dict(), de) == (
        "Position wiederhergestellt"
    )
    assert event_text(GameResumed(t=1, ply=12, fen=chess.STARTING_FEN).to_dict(), de) == (
        "Spiel fortgesetzt"
    )
    assert event_text(GameEnd(t=1, result="1-0", reason="checkmate").to_dict(), de) == (
        "Partie beendet. Weiß gewinnt. Matt"
    )
    assert event_text(GameEnd(t=1, result="1/2-1/2", reason="stalemate").to_dict(), en) == (
        "Game over. Draw. stalemate"
    )
    assert event_text(FlagFall(t=1, side="black").to_dict(), de) == "Zeit abgelaufen: Schwarz"
    assert event_text(FlagFall(t=1, side=None, both=True).to_dict(), de) == (
        "Beide Zeiten abgelaufen"
    )
    assert event_text({"type": "clock", "white": 1, "black": 2}, de) is None


def test_answers_last_clock_and_move_number(de) -> None:
    record = play(["e4", "e5", "Nf3"], clock=(3725.0, 59.4))
    assert answer("last", {}, record, de) == "Letzter Zug: Springer Felix drei"
    assert answer("move_number", {}, record, de) == "Zug 2, Schwarz am Zug"
    # Own time first: black asks.
    assert answer("clock", {}, record, de, by="black", time_left=True).endswith(
        "Schwarz 59 Sekunden. Weiß eine Stunde 2 Minuten 5 Sekunden"
    )
    left = answer("clock", {}, record, de, by="white", time_left=True)
    assert left.split(". ")[3].startswith("Weiß eine Stunde 2 Minuten")
    assert answer("clock", {}, play(["e4"]), de, time_left=True).endswith("Keine Uhrzeit bekannt")
    assert answer("last", {}, play([]), de) == "Noch kein Zug"


def test_the_last_move_is_the_corrected_one(de) -> None:
    record = play(["e4", "e5"])
    board = chess.Board()
    board.push_san("e4")
    corrected = board.copy()
    corrected.push_san("c5")
    record.apply(
        {"t": 5.0, "type": "move", "ply": 2, "uci": "c7c5", "san": "c5", "fen": corrected.fen(),
         "by": "black", "speech": "?", "correction": True}
    )  # fmt: skip
    assert answer("last", {}, record, de) == "Letzter Zug: Bauer Cesar fuenf"


def test_reading_the_board_by_colour_and_piece_type_in_short_phrases(de) -> None:
    record = GameRecord()
    record.apply({"t": 0, "type": "game_start", "fen": "r3k3/8/8/8/8/8/4P3/R4RK1 w q - 0 1"})
    assert answer("board", {}, record, de) == (
        "Weiß: Koenig Gustav eins. Tuerme Anna eins, Felix eins. Bauer Eva zwei."
        " Schwarz: Koenig Eva acht. Turm Anna acht"
    )
    record.apply({"t": 1, "type": "game_start", "fen": chess.STARTING_FEN})
    phrases = answer_phrases("board", {}, record, de)
    # A phrase per square, so that one fits a gap between blitz moves; at leisure
    # the schedule says three pawns together: no phrase holds a move up for long.
    schedule = SpeechSchedule()
    schedule.offer(Announcement(1, "answer", 0.0, compose=lambda: phrases, patient=True), 0.0)
    said = []
    while (phrase := schedule.next(0.0)) is not None:
        said.append(phrase.written)
        schedule.done(phrase, 0.0)
    assert said[5:8] == [
        "Bauern Anna zwei, Bella zwei, Cesar zwei",
        "David zwei, Eva zwei, Felix zwei",
        "Gustav zwei, Hector zwei",
    ]
    assert " ".join(said).count("Schwarz") == 1
    # After an interruption a phrase names its colour and piece again.
    assert dict((p[0], p[2]) for p in phrases)["black:N:1"] == "Schwarz: Springer Gustav acht"
    assert answer("board", {}, record, de).startswith(
        "Weiß: Koenig Eva eins. Dame David eins. Tuerme Anna eins, Hector eins."
    )


def test_square_and_piece_answers(de) -> None:
    record = play(["e4", "Nf6"])
    assert answer("square", {"square": "f6"}, record, de) == "Felix sechs: Springer Schwarz"
    assert answer("square", {"square": "E5"}, record, de) == "Eva fuenf: leer"
    assert answer("piece", {"piece": "N"}, record, de) == ("Springer Weiß: Bella eins, Gustav eins")
    assert answer("piece", {"piece": "q", "colour": "both"}, record, de) == (
        "Dame Weiß: David eins. Dame Schwarz: David acht"
    )
    record.apply({"t": 9, "type": "game_start", "fen": "4k3/8/8/8/8/8/8/4K3 w - - 0 1"})
    assert answer("piece", {"piece": "Q"}, record, de) == "Dame Weiß: keine"


def test_bad_requests_are_said_to_be_unknown(de) -> None:
    record = play([])
    assert answer("weather", {}, record, de) == "Unbekannte Frage: weather"
    assert answer("square", {"square": "z9"}, record, de) == "Unbekannte Frage: square z9"
    assert answer("piece", {"piece": "X"}, record, de) == "Unbekannte Frage: piece X"


def test_after_a_restart_the_last_move_is_still_phrased_from_the_board(de) -> None:
    """The record starts at the resumed position; the next move replays from there."""
    board = chess.Board()
    for san in ["e4", "e5", "Nf3"]:
        board.push_san(san)
    record = GameRecord()
    record.apply({"t": 0.0, "type": "game_resumed", "ply": 3, "fen": board.fen()})
    move = board.parse_san("Nc6")
    board.push(move)
    record.apply(
        {"t": 1.0, "type": "move", "ply": 4, "uci": move.uci(), "san": "Nc6",
         "fen": board.fen(), "by": "black", "speech": "(not used)"}
    )  # fmt: skip
    assert answer("last", {}, record, de) == "Letzter Zug: Springer Cesar sechs"


def castled_position() -> chess.Board:
    board = chess.Board()
    for san in ("e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"):
        board.push_san(san)
    return board


def irregularity(kind: str, by: str | None, squares: list[str], **kw) -> dict:
    return Irregularity(t=1.0, kind=kind, article="4", by=by, squares=squares, **kw).to_dict()


#: Every irregularity kind the rules core reports, as it reports it, and what each
#: vocabulary says: what happened, what to do, a piece word on every square named.
IRREGULARITIES = {
    "castling_rook_first": (
        irregularity("castling_rook_first", "white", ["h1", "e1"]),
        "after O-O",
        {
            "appendix-e": "Rochade mit dem Turm zuerst begonnen: Turm Hector eins zuerst"
            " berührt. Der Turm musste ziehen. Reklamation beim Schiedsrichter möglich",
            "en": "Castling begun with the rook: Rook Hotel one touched first. The rook had to"
            " move. The arbiter may be called",
            "es": "Enroque empezado con la torre: primero se tocó Torre Héctor uno. Debía moverse"
            " la torre. Se puede reclamar al árbitro",
        },
    ),
    "incomplete_castling": (
        irregularity(
            "incomplete_castling",
            "white",
            ["e1", "g1"],
            restore=[{"square": "e1", "piece": "K"}, {"square": "g1", "piece": None}],
        ),
        "before O-O",
        {
            "appendix-e": "Rochade unvollständig: Turm fehlt. Turm von Hector eins auf Felix eins",
            "en": "Castling incomplete: rook missing. Rook from Hotel one to Foxtrot one",
            "es": "Enroque incompleto: falta la torre. Torre de Héctor uno a Félix uno",
        },
    ),
    "incomplete_promotion": (
        irregularity(
            "incomplete_promotion",
            "white",
            ["e7", "e8"],
            restore=[{"square": "e7", "piece": "P"}, {"square": "e8", "piece": None}],
        ),
        "8/4P3/8/8/8/2k5/8/4K3 w - - 0 1",
        {
            "appendix-e": "Umwandlung unvollständig: Figur fehlt auf Eva acht. Bauer durch die"
            " neue Figur ersetzen",
            "en": "Promotion incomplete: no piece on Echo eight. Replace the pawn with the new"
            " piece",
            "es": "Coronación incompleta: falta la pieza en Eva ocho. Cambiar el peón por la"
            " pieza nueva",
        },
    ),
    "clock_without_move": (
        irregularity("clock_without_move", "black", []),
        "after O-O",
        {
            "appendix-e": "Uhr ohne Zug gedrückt. Schwarz ist am Zug.",
            "en": "Clock pressed without a move. Black to move.",
            "es": "Reloj pulsado sin jugada. Juegan las negras.",
        },
    ),
    "touch_move_own": (
        irregularity("touch_move", "white", ["b1", "e2"]),
        "start e4",
        {
            "appendix-e": "Berührt, geführt: Springer Bella eins zuerst berührt, musste ziehen."
            " Reklamation beim Schiedsrichter möglich",
            "en": "Touch move: Knight Bravo one was touched first and had to be moved. The"
            " arbiter may be called",
            "es": "Pieza tocada primero: Caballo Bella uno. Había que moverla. Se puede reclamar al"
            " árbitro",
        },
    ),
    "touch_move_opponent": (
        irregularity("touch_move", "black", ["e4", "g8"]),
        "start e4 Nf6",
        {
            "appendix-e": "Berührt, geführt: Bauer Weiß Eva vier zuerst berührt, musste"
            " geschlagen werden. Reklamation beim Schiedsrichter möglich",
            "en": "Touch move: White Pawn Echo four was touched first and had to be captured."
            " The arbiter may be called",
            "es": "Pieza tocada primero: Peón de las blancas Eva cuatro. Había que capturarla. Se"
            " puede reclamar al árbitro",
        },
    ),
    "wrong_setup": (
        irregularity(
            "wrong_setup",
            None,
            ["d1", "e1"],
            restore=[{"square": "d1", "piece": "Q"}, {"square": "e1", "piece": "K"}],
        ),
        "start",
        {
            "appendix-e": "Grundstellung falsch: Dame Weiß auf David eins, Koenig Weiß auf Eva"
            " eins",
            "en": "Pieces not in the initial position: White Queen on Delta one, White King on"
            " Echo one",
            "es": "Posición inicial incorrecta: poner Dama de las blancas en David uno, poner"
            " Rey de las blancas en Eva uno",
        },
    ),
    "boards_diverged": (  # two boards, one game: the blind Black has not repeated e4
        irregularity(
            "boards_diverged",
            "black",
            ["e2", "e4"],
            restore=[{"square": "e4", "piece": "P"}, {"square": "e2", "piece": None}],
        ),
        "start e4",
        {
            "appendix-e": "Bretter verschieden: Brett von Schwarz berichtigen, das andere Brett"
            " gilt. Bauer Weiß auf Eva vier, Eva zwei räumen",
            "en": "Boards differ: correct the board of Black, the other board is right. White"
            " Pawn on Echo four, clear Echo two",
            "es": "Tableros distintos: corregir el tablero de las negras, el otro tablero vale."
            " poner Peón de las blancas en Eva cuatro, vaciar Eva dos",
        },
    ),
}


def position(name: str) -> chess.Board:
    if name.startswith("start"):
        board = chess.Board()
        for san in name.split()[1:]:
            board.push_san(san)
        return board
    if name == "before O-O":
        return castled_position()
    if name == "after O-O":
        board = castled_position()
        board.push_san("O-O")
        return board
    return chess.Board(name)


@pytest.mark.parametrize("vocabulary", ["appendix-e", "en", "es"])
@pytest.mark.parametrize("case", sorted(IRREGULARITIES))
def test_every_irregularity_says_what_happened_and_what_to_do(case: str, vocabulary: str) -> None:
    event, where, expected = IRREGULARITIES[case]
    assert event_text(event, load_vocabulary(vocabulary), position(where)) == expected[vocabulary]


CAPTURED_D5 = "Bauer Schwarz David fuenf zuerst berührt, musste geschlagen werden"
#: The rules core's details (daemon/rules/touch.py) and the squares it gives.
TOUCH_DETAILS = [
    ("4.3a: knight on b1 was the first touched piece that could be moved, and had to be moved",
     ["b1", "e2"], "Springer Bella eins zuerst berührt, musste ziehen"),
    ("4.3b: pawn on d5 was the first touched piece that could be captured, and had to be"
     " captured", ["d5", "g1"], CAPTURED_D5),
    ("4.3c: pieces of both colours were touched; queen on d1 could capture pawn on d5 and had to",
     ["d1", "d5", "g1"], "Dame David eins musste Bauer Schwarz David fuenf schlagen"),
    ("4.3c: pawn on d5 was the first touched piece that could be captured, and had to be"
     " captured", ["d5", "g1"], CAPTURED_D5),
    ("", ["b1", "e2"], "Springer Bella eins zuerst berührt, musste ziehen"),  # none: by colour
]  # fmt: skip


@pytest.mark.parametrize(("detail", "squares", "expected"), TOUCH_DETAILS)
def test_touch_move_reads_the_rule_from_the_detail_when_given(
    de, detail, squares, expected
) -> None:
    board = position("start d4 d5")
    board.push_san("Nf3")  # the move made after the touch
    event = irregularity("touch_move", "white", squares, detail=detail)
    assert event_text(event, de, board) == (
        f"Berührt, geführt: {expected}. Reklamation beim Schiedsrichter möglich"
    )


def test_a_draw_on_time_says_remis_once(de) -> None:
    flag = event_text(FlagFall(t=1, side="white", draw=True).to_dict(), de)
    end = event_text(GameEnd(t=1, result="1/2-1/2", reason="flag_draw").to_dict(), de)
    assert f"{flag} {end}".count("Remis") == 1
    assert end == "Partie beendet. Remis. Zeitüberschreitung, kein Matt möglich"


def test_a_swapped_promotion_piece_says_the_first_piece_stands_and_what_to_put_back(de, en) -> None:
    # As the rules core reports 4.4d (tests/rules/test_rules_promotion.py): the queen
    # touched e8 first, a knight stands there now.
    event = Irregularity(
        t=5.0, kind="promotion_changed", article="4.4", by="white", squares=["e8"],
        restore=[{"square": "e8", "piece": "Q"}],
        detail="4.4d: the queen touched e8 first; the choice of piece is final",
    ).to_dict()  # fmt: skip
    assert event_text(event, de) == (
        "Umwandlung schon entschieden: die erste Figur auf Eva acht gilt. Dame auf Eva acht"
    )
    assert event_text(event, en) == (
        "Promotion already decided: the first piece set on Echo eight stands. Queen on Echo eight"
    )


def test_a_result_shown_with_the_kings_is_said_in_words(de, en) -> None:
    event = GameEnd(t=9.0, result="1-0", reason="result_on_board").to_dict()
    assert event_text(event, de) == (
        "Partie beendet. Weiß gewinnt. Ergebnis auf dem Brett angezeigt"
    )
    assert "result shown on the board" in str(event_text(event, en))


def _replayed_before(record: GameRecord, ply: int) -> chess.Board | None:
    """The position before ``ply`` by replaying the record's moves from its start."""
    board = chess.Board(record.start_fen)
    for move in record.moves:
        if move.ply >= ply:
            break
        board.push(chess.Move.from_uci(move.uci))
    return board


def test_every_move_is_phrased_from_the_position_before_it_through_a_game_and_a_takeback(
    shared, de
) -> None:
    # The phrase's board comes from the record's kept replay with the later moves
    # taken back (no replay from the start per move said): the same position for the
    # move just made, an older one, after a takeback and a move made instead, and the
    # same phrase as from a whole replay (the board keeps no move stack: a phrase
    # reads the position only).
    import chess.pgn

    from daemon.speech.answers import board_before_ply
    from daemon.speech.phrases import phrase_for_move

    games: list[chess.pgn.Game] = []
    with open(shared / "data" / "games.pgn", encoding="utf-8") as handle:
        while len(games) < 3 and (game := chess.pgn.read_game(handle)) is not None:
            if game.board().fen() == chess.STARTING_FEN and game.end().ply() >= 40:
                games.append(game)
    assert len(games) == 3
    for game in games:
        sans = []
        board = game.board()
        for move in game.mainline_moves():
            sans.append(board.san(move))
            board.push(move)
        record = play(sans[:40])
        for ply in (1, 2, 20, 40):
            got, whole = board_before_ply(record, ply), _replayed_before(record, ply)
            assert got is not None and got.fen() == whole.fen()
            move = chess.Move.from_uci(record.moves[ply - 1].uci)
            assert phrase_for_move(got, move, de) == phrase_for_move(whole, move, de)
        record.apply({"t": 50.0, "type": "takeback", "ply": 39, "fen": None})
        got = board_before_ply(record, 39)
        assert got is not None and got.fen() == _replayed_before(record, 39).fen()
        assert board_before_ply(record, 40) is None  # the move is no longer there
