"""Pairings files read as a pairing program writes them: FIDE TRF (TRF16) and the
pairing list exported as CSV (Swiss-Manager's layout, in English and German, and a
Vega-style list), with the boards in order, the round and the byes; and every bad
file named with its line and what was expected, never a traceback.

The samples in ``samples/`` were made for these tests: a nine-player Swiss after two
rounds with round 3 paired (the TRF's columns as TRF16 gives them; the CSVs as the
programs print a pairing list), cp1252 and UTF-8 with a byte-order mark among them.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.pairings.files import Pairing, PairingsError, read_pairings

SAMPLES = Path(__file__).parent / "samples"

ROUND_3 = [
    Pairing(1, "Kramnik, Vladimir", "Anand, Viswanathan"),
    Pairing(2, "Dreev, Aleksey", "Hou, Yifan"),
    Pairing(3, "Lindqvist, Åke", "Müller, Käthe"),
    Pairing(4, "Okonkwo, Chidi", "Dubois, Élodie"),
]


@pytest.mark.parametrize(
    "name", ["club-round3.trf", "swissmanager-round3.csv", "swissmanager-runde3-de.csv",
             "vega-round3.csv"],
)  # fmt: skip
def test_every_format_gives_the_same_boards_and_round(name):
    read = read_pairings((SAMPLES / name).read_bytes())
    assert read.pairings == ROUND_3
    assert read.round == "3"
    assert read.byes == ["Bye, Late Entry"]


def test_trf_orders_boards_by_score_and_names_the_event():
    """TRF has no board numbers: the leader's pair is board 1 (2 points v 1.5), then
    1.5 v 0.5, 1 v 1, 0 v 0.5; the event is the 012 line."""
    read = read_pairings((SAMPLES / "club-round3.trf").read_bytes())
    assert read.kind == "TRF" and read.event == "Hall Club Championship 2026"


def test_an_earlier_round_of_the_trf_is_read_with_its_results():
    read = read_pairings((SAMPLES / "club-round3.trf").read_bytes(), round_number=1)
    assert read.round == "1"
    assert {(p.white, p.black) for p in read.pairings} == {
        ("Kramnik, Vladimir", "Müller, Käthe"), ("Lindqvist, Åke", "Anand, Viswanathan"),
        ("Hou, Yifan", "Okonkwo, Chidi"), ("Dubois, Élodie", "Dreev, Aleksey"),
    }  # fmt: skip


def _trf_lines() -> list[str]:
    return (SAMPLES / "club-round3.trf").read_text(encoding="utf-8").splitlines()


def _trf(lines: list[str]) -> bytes:
    return "\n".join(lines).encode()


def test_a_trf_whose_rounds_all_have_results_asks_which_round():
    with pytest.raises(PairingsError, match=r"has results already: .*--round N"):
        read_pairings(_trf(_played_round_3(_trf_lines())))


def _played_round_3(lines: list[str]) -> list[str]:
    """Round 3 played: each player's third result set (1 for White, 0 for Black)."""
    out = []
    for line in lines:
        if line.startswith("001") and len(line) > 116 and line[116] in "wb":
            line = line[:118].ljust(118) + ("1" if line[116] == "w" else "0")
        out.append(line)
    return out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda ls: [*ls, ls[10]], r"line 20: start rank 1 is given twice \(also line 11\)"),
        (lambda ls: [ls[11][:4] + "  x2" + ls[11][8:] if i == 11 else ln
                     for i, ln in enumerate(ls)], r"line 12: .*start rank in columns 5-8"),
        (lambda ls: [ln.replace("    1 w", "    1 x") if i == 12 else ln
                     for i, ln in enumerate(ls)], r"line 13: round 2 of Hou, Yifan: colour 'x'"),
        (lambda ls: [ln[:111] + "   3 w" if i == 10 else ln for i, ln in enumerate(ls)],
         r"line 11: round 3: Kramnik, Vladimir plays Hou, Yifan, but Hou, Yifan \(line 13\) "
         "plays 4"),
        (lambda ls: [ln[:111] + "  99 b" if i == 11 else ln for i, ln in enumerate(ls)],
         r"line 11: round 3: Kramnik, Vladimir plays Anand, Viswanathan, but .*plays 99"),
        (lambda ls: [ln[:111] + "   3 b" if i == 13 else ln for i, ln in enumerate(ls)],
         r"line 13: round 3: Hou, Yifan and Dreev, Aleksey \(line 14\) both have Black"),
        (lambda ls: [ln[:30] + "!" * 3 + ln[33:91] + "  abc" if ln.startswith("001") and i == 14
                     else ln for i, ln in enumerate(ls)], r"line 15: round 1 of .*opponent"),
    ],
)  # fmt: skip
def test_a_broken_trf_names_its_line(change, message):
    with pytest.raises(PairingsError, match=message):
        read_pairings(_trf(change(_trf_lines())))


def test_a_trf_round_it_does_not_have():
    with pytest.raises(PairingsError, match="pairs 3 rounds, not round 7"):
        read_pairings((SAMPLES / "club-round3.trf").read_bytes(), round_number=7)


CSV_HEADER = "Bo.;No.;;Name;Rtg;Pts.;Result;Pts.;;Name;Rtg;No."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("\n\n  \n", "the file is empty"),
        ("PK\x03\x04\x00\x00binary", "not a text file"),
        ("Name;Rating\nCarlsen;2830\n", "neither a TRF file .* nor a CSV pairing list"),
        ("just some words\nand more", "neither a TRF file"),
        (f"Round 3\n{CSV_HEADER}\n", r"line 2: the pairing list has a header but no games"),
        (f"Round 3\n{CSV_HEADER}\nx;1;;A, B;2000;0;;0;;C, D;1900;2\n",
         r"line 3: the board number is 'x'"),
        (f"Round 3\n{CSV_HEADER}\n1;1;;A, B;;;;;;C, D;;2\n1;3;;E, F;;;;;;G, H;;4\n",
         r"line 4: board 1 is given twice \(also line 3\)"),
        (f"{CSV_HEADER}\n1;1;;A, B;;;;;;C, D;;2\n", "does not say its round: .*--round N"),
        (f"Round 3\n{CSV_HEADER}\n1;1;;{'x' * 120};;;;;;C, D;;2\n", "line 3: a name longer"),
        ("Round,Board,White,Black\n1,1,A,B\n2,1,C,D\n", r"holds rounds 1, 2: say which"),
    ],
)  # fmt: skip
def test_a_bad_csv_or_no_pairings_at_all_is_a_clear_error(text, message):
    with pytest.raises(PairingsError, match=message):
        read_pairings(text.encode())


def test_a_list_of_several_rounds_gives_the_round_asked_for():
    read = read_pairings(b"Round,Board,White,Black\n1,1,A,B\n2,1,C,D\n2,2,E,F\n", round_number=2)
    assert read.round == "2" and read.pairings == [Pairing(1, "C", "D"), Pairing(2, "E", "F")]


@given(st.binary(max_size=400))
def test_no_bytes_at_all_raise_anything_but_a_pairings_error(data):
    with contextlib.suppress(PairingsError):
        read_pairings(data)


@given(st.text(alphabet="001 wb=10+-HFU;,\t\nNameBoRound3.", max_size=300))
def test_no_text_made_of_the_formats_own_pieces_raises_anything_else(text):
    with contextlib.suppress(PairingsError):
        read_pairings(text, round_number=None)
