"""Every kind of move, in every shipped vocabulary, short and long form.

The positions are taken from real games in the shared games.pgn (game number in
file order, 1-based, and the ply of the move); the expected phrases are written by
hand from the Appendix E word list and the vocabulary files, not produced by the
code under test.
"""

from __future__ import annotations

import chess
import chess.pgn
import pytest

from daemon.speech.phrases import describe_move, make_describer
from daemon.speech.tokens import move_tokens
from daemon.speech.vocabulary import load_vocabulary

# id: (game, ply, fen before, uci, {vocabulary: (short, long)})
CASES: dict[str, tuple[int, int, str, str, dict[str, tuple[str, str]]]] = {
    "pawn push": (
        8,
        1,
        chess.STARTING_FEN,
        "d2d4",
        {
            "appendix-e": ("Bauer David vier", "Bauer David zwei David vier"),
            "en": ("Pawn Delta four", "Pawn Delta two Delta four"),
            "es": ("Peón David cuatro", "Peón David dos David cuatro"),
        },
    ),
    "knight move": (
        8,
        2,
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
        "g8f6",
        {
            "appendix-e": ("Springer Felix sechs", "Springer Gustav acht Felix sechs"),
            "en": ("Knight Foxtrot six", "Knight Golf eight Foxtrot six"),
            "es": ("Caballo Félix seis", "Caballo Gustavo ocho Félix seis"),
        },
    ),
    "disambiguation by file": (
        8,
        10,
        "rnbqkb1r/pp3ppp/4pn2/2pp4/3P4/2PBPN2/PP3PPP/RNBQK2R b KQkq - 0 5",
        "b8d7",
        {
            "appendix-e": ("Springer Bella David sieben", "Springer Bella acht David sieben"),
            "en": ("Knight Bravo Delta seven", "Knight Bravo eight Delta seven"),
            "es": ("Caballo Bella David siete", "Caballo Bella ocho David siete"),
        },
    ),
    "white castles short": (
        8,
        13,
        "r1bqk2r/pp1nbppp/4pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQK2R w KQkq - 3 7",
        "e1g1",
        {
            "appendix-e": ("Kurze Rochade", "Kurze Rochade"),
            "en": ("Castles kingside", "Castles kingside"),
            "es": ("Enroque corto", "Enroque corto"),
        },
    ),
    "pawn capture": (
        8,
        16,
        "r1b1k2r/ppqnbppp/4pn2/2pp4/3PP3/2PB1N2/PP1N1PPP/R1BQ1RK1 b kq - 0 8",
        "c5d4",
        {
            "appendix-e": (
                "Bauer Cesar schlägt David vier",
                "Bauer Cesar fuenf schlägt David vier",
            ),
            "en": ("Pawn Charlie takes Delta four", "Pawn Charlie five takes Delta four"),
            "es": ("Peón César captura David cuatro", "Peón César cinco captura David cuatro"),
        },
    ),
    "black castles short": (
        8,
        24,
        "r1b1k2r/ppq1bppp/4pn2/8/3P4/3B1N2/PP3PPP/R1BQ1RK1 b kq - 2 12",
        "e8g8",
        {
            "appendix-e": ("Kurze Rochade", "Kurze Rochade"),
            "en": ("Castles kingside", "Castles kingside"),
            "es": ("Enroque corto", "Enroque corto"),
        },
    ),
    "rook capture": (
        8,
        39,
        "2rrb1k1/pp1qbppp/4pn2/6B1/3P4/3BN3/PP2QPPP/2RR2K1 w - - 17 20",
        "c1c8",
        {
            "appendix-e": ("Turm schlägt Cesar acht", "Turm Cesar eins schlägt Cesar acht"),
            "en": ("Rook takes Charlie eight", "Rook Charlie one takes Charlie eight"),
            "es": ("Torre captura César ocho", "Torre César uno captura César ocho"),
        },
    ),
    "king move": (
        8,
        56,
        "2r3k1/pp3p2/2b1pb2/6qp/8/1P1QN2P/P4PP1/1B1R2K1 b - - 1 28",
        "g8f8",
        {
            "appendix-e": ("Koenig Felix acht", "Koenig Gustav acht Felix acht"),
            "en": ("King Foxtrot eight", "King Golf eight Foxtrot eight"),
            "es": ("Rey Félix ocho", "Rey Gustavo ocho Félix ocho"),
        },
    ),
    "check": (
        8,
        75,
        "5k2/pp6/4p3/1b3p1p/7q/1P2Q3/P4PP1/6K1 w - - 0 38",
        "e3c5",
        {
            "appendix-e": ("Dame Cesar fuenf Schach", "Dame Eva drei Cesar fuenf Schach"),
            "en": ("Queen Charlie five check", "Queen Echo three Charlie five check"),
            "es": ("Dama César cinco jaque", "Dama Eva tres César cinco jaque"),
        },
    ),
    "black castles long": (
        10,
        22,
        "r3kb1r/1ppbn1pp/p4p2/2p5/4P3/4N3/PPPBNPPP/R3K2R b KQkq - 4 11",
        "e8c8",
        {
            "appendix-e": ("Lange Rochade", "Lange Rochade"),
            "en": ("Castles queenside", "Castles queenside"),
            "es": ("Enroque largo", "Enroque largo"),
        },
    ),
    "white castles long": (
        10,
        23,
        "2kr1b1r/1ppbn1pp/p4p2/2p5/4P3/4N3/PPPBNPPP/R3K2R w KQ - 5 12",
        "e1c1",
        {
            "appendix-e": ("Lange Rochade", "Lange Rochade"),
            "en": ("Castles queenside", "Castles queenside"),
            "es": ("Enroque largo", "Enroque largo"),
        },
    ),
    "disambiguation by rank": (
        10,
        57,
        "7r/1kp5/p1b4b/2pN1p2/1pr2P1p/6P1/PP1R3P/1K1N3R w - - 0 29",
        "d1e3",
        {
            "appendix-e": ("Springer eins Eva drei", "Springer David eins Eva drei"),
            "en": ("Knight one Echo three", "Knight Delta one Echo three"),
            "es": ("Caballo uno Eva tres", "Caballo David uno Eva tres"),
        },
    ),
    "capture with check": (
        13,
        14,
        "r1bqk2r/pp1p1ppp/4pn2/2n5/1bP5/P1N2N2/1PQ1PPPP/R1B1KB1R b KQkq - 0 7",
        "b4c3",
        {
            "appendix-e": (
                "Laeufer schlägt Cesar drei Schach",
                "Laeufer Bella vier schlägt Cesar drei Schach",
            ),
            "en": (
                "Bishop takes Charlie three check",
                "Bishop Bravo four takes Charlie three check",
            ),
            "es": ("Alfil captura César tres jaque", "Alfil Bella cuatro captura César tres jaque"),
        },
    ),
    "en passant": (
        38,
        40,
        "r1b1r1k1/1pp1q1p1/3p1p2/p1bP4/4PPp1/PP4P1/1BQ3BP/4RR1K b - f3 0 20",
        "g4f3",
        {
            "appendix-e": (
                "Bauer Gustav schlägt Felix drei en passant",
                "Bauer Gustav vier schlägt Felix drei en passant",
            ),
            "en": (
                "Pawn Golf takes Foxtrot three en passant",
                "Pawn Golf four takes Foxtrot three en passant",
            ),
            "es": (
                "Peón Gustavo captura Félix tres al paso",
                "Peón Gustavo cuatro captura Félix tres al paso",
            ),
        },
    ),
    "promotion with check": (
        63,
        77,
        "2r4k/p2r1Pp1/1p6/3pP1bP/2p5/5RQ1/P4NK1/4q3 w - - 0 39",
        "f7f8q",
        {
            "appendix-e": (
                "Bauer Felix acht Umwandlung Dame Schach",
                "Bauer Felix sieben Felix acht Umwandlung Dame Schach",
            ),
            "en": (
                "Pawn Foxtrot eight promotes to Queen check",
                "Pawn Foxtrot seven Foxtrot eight promotes to Queen check",
            ),
            "es": (
                "Peón Félix ocho corona Dama jaque",
                "Peón Félix siete Félix ocho corona Dama jaque",
            ),
        },
    ),
    "capture promotion with check": (
        82,
        68,
        "2N2rk1/6pp/p3p3/2n5/1P6/4K2P/3p2P1/2R1R3 b - - 0 34",
        "d2e1q",
        {
            "appendix-e": (
                "Bauer David schlägt Eva eins Umwandlung Dame Schach",
                "Bauer David zwei schlägt Eva eins Umwandlung Dame Schach",
            ),
            "en": (
                "Pawn Delta takes Echo one promotes to Queen check",
                "Pawn Delta two takes Echo one promotes to Queen check",
            ),
            "es": (
                "Peón David captura Eva uno corona Dama jaque",
                "Peón David dos captura Eva uno corona Dama jaque",
            ),
        },
    ),
    "underpromotion to knight with check": (
        119,
        75,
        "8/1p3P1k/3p4/8/8/pPn5/P2N4/K3n3 w - - 0 38",
        "f7f8n",
        {
            "appendix-e": (
                "Bauer Felix acht Umwandlung Springer Schach",
                "Bauer Felix sieben Felix acht Umwandlung Springer Schach",
            ),
            "en": (
                "Pawn Foxtrot eight promotes to Knight check",
                "Pawn Foxtrot seven Foxtrot eight promotes to Knight check",
            ),
            "es": (
                "Peón Félix ocho corona Caballo jaque",
                "Peón Félix siete Félix ocho corona Caballo jaque",
            ),
        },
    ),
    "mate": (
        119,
        78,
        "5N2/1p6/3p3k/8/8/pPn5/P7/KN2n3 b - - 2 39",
        "e1c2",
        {
            "appendix-e": ("Springer Cesar zwei Matt", "Springer Eva eins Cesar zwei Matt"),
            "en": ("Knight Charlie two checkmate", "Knight Echo one Charlie two checkmate"),
            "es": ("Caballo César dos jaque mate", "Caballo Eva uno César dos jaque mate"),
        },
    ),
    "castling with check": (
        191,
        49,
        "r4k2/pp6/8/3pP1B1/7P/bPp5/P1b5/R3K2R w KQ - 0 25",
        "e1g1",
        {
            "appendix-e": ("Kurze Rochade Schach", "Kurze Rochade Schach"),
            "en": ("Castles kingside check", "Castles kingside check"),
            "es": ("Enroque corto jaque", "Enroque corto jaque"),
        },
    ),
    "underpromotion to bishop": (
        323,
        144,
        "Q7/8/8/8/1K4k1/2P5/7p/8 b - - 0 72",
        "h2h1b",
        {
            "appendix-e": (
                "Bauer Hector eins Umwandlung Laeufer",
                "Bauer Hector zwei Hector eins Umwandlung Laeufer",
            ),
            "en": (
                "Pawn Hotel one promotes to Bishop",
                "Pawn Hotel two Hotel one promotes to Bishop",
            ),
            "es": ("Peón Héctor uno corona Alfil", "Peón Héctor dos Héctor uno corona Alfil"),
        },
    ),
    "underpromotion to rook": (
        391,
        124,
        "8/3k4/8/7R/8/8/6Kp/5r2 b - - 3 62",
        "h2h1r",
        {
            "appendix-e": (
                "Bauer Hector eins Umwandlung Turm",
                "Bauer Hector zwei Hector eins Umwandlung Turm",
            ),
            "en": ("Pawn Hotel one promotes to Rook", "Pawn Hotel two Hotel one promotes to Rook"),
            "es": ("Peón Héctor uno corona Torre", "Peón Héctor dos Héctor uno corona Torre"),
        },
    ),
    "capture promotion with mate": (
        760,
        71,
        "b1r2qk1/6Pp/4p2n/p1BpNp2/pp1P1P2/3PP3/3KB3/2R3R1 w - - 0 36",
        "g7f8q",
        {
            "appendix-e": (
                "Bauer Gustav schlägt Felix acht Umwandlung Dame Matt",
                "Bauer Gustav sieben schlägt Felix acht Umwandlung Dame Matt",
            ),
            "en": (
                "Pawn Golf takes Foxtrot eight promotes to Queen checkmate",
                "Pawn Golf seven takes Foxtrot eight promotes to Queen checkmate",
            ),
            "es": (
                "Peón Gustavo captura Félix ocho corona Dama jaque mate",
                "Peón Gustavo siete captura Félix ocho corona Dama jaque mate",
            ),
        },
    ),
}

VOCABULARIES = ("appendix-e", "en", "es")


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
@pytest.mark.parametrize("form", ["short", "long"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_phrase_of_every_move_kind(case: str, form: str, vocabulary: str) -> None:
    _game, _ply, fen, uci, expected = CASES[case]
    describe = make_describer(vocabulary, form=form)
    board = chess.Board(fen)
    phrase = describe(board, chess.Move.from_uci(uci))
    assert phrase == expected[vocabulary][0 if form == "short" else 1]
    assert board.fen() == fen  # the rules core's board is not touched


def test_positions_are_those_of_the_real_games(shared) -> None:
    """Each case's position and move are where the table says in games.pgn."""
    wanted = sorted((game, ply, name) for name, (game, ply, *_rest) in CASES.items())
    with open(shared / "data" / "games.pgn", encoding="utf-8") as pgn:
        number = 0
        for game_number, ply, name in wanted:
            while number < game_number - 1:
                chess.pgn.skip_game(pgn)
                number += 1
            if number == game_number - 1:
                game = chess.pgn.read_game(pgn)
                number += 1
            assert game is not None
            board = game.board()
            moves = list(game.mainline_moves())
            for move in moves[: ply - 1]:
                board.push(move)
            assert board.fen() == CASES[name][2], name
            assert moves[ply - 1].uci() == CASES[name][3], name


def test_square_disambiguation_names_the_whole_from_square() -> None:
    # Constructed (no game in the collection needs it): three queens reach b2.
    board = chess.Board("7k/8/8/8/8/Q7/8/Q1Q4K w - - 0 1")
    move = chess.Move.from_uci("a1b2")
    assert board.san(move) == "Qa1b2+"
    assert make_describer()(board, move) == "Dame Anna eins Bella zwei Schach"


def test_pawn_word_can_be_left_out() -> None:
    quiet = make_describer("appendix-e", say_pawn=False)
    start = chess.Board()
    assert quiet(start, chess.Move.from_uci("e2e4")) == "Eva vier"
    _g, _p, fen, uci, _e = CASES["capture promotion with check"]
    assert (
        quiet(chess.Board(fen), chess.Move.from_uci(uci))
        == "David schlägt Eva eins Umwandlung Dame Schach"
    )
    assert quiet(start, chess.Move.from_uci("g1f3")) == "Springer Felix drei"


def test_default_describe_move_is_appendix_e_short_form() -> None:
    assert describe_move(chess.Board(), chess.Move.from_uci("g1f3")) == "Springer Felix drei"


def test_spoken_form_uses_the_pronunciation_lexicon() -> None:
    vocabulary = load_vocabulary("appendix-e")
    expected = CASES["capture with check"][4]
    written = expected["appendix-e"][1]
    assert vocabulary.pronounce(written) == "Läufer Bella vier schlägt Zäsar drei Schach"
    assert vocabulary.pronounce("Koenig Eva eins, Bauer Felix fuenf") == (
        "König Eva [[_|'aIns]], Bauer Felix fünf"
    )
    # whole words only: a word that merely contains a lexicon entry stays as written
    assert vocabulary.pronounce("Cesarea fuenfzig") == "Cesarea fuenfzig"


def test_illegal_move_gets_no_phrase() -> None:
    with pytest.raises(ValueError, match="not legal"):
        move_tokens(chess.Board(), chess.Move.from_uci("e2e5"))


def test_chess960_castling_is_one_token() -> None:
    # White king b1, rook a1: O-O-O moves the king to c1 and the rook to d1.
    board = chess.Board("4k2r/8/8/8/8/8/8/RK5R w HAh - 0 1", chess960=True)
    move = board.parse_san("O-O-O")
    assert make_describer()(board, move) == "Lange Rochade"
