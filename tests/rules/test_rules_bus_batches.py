"""Board reports that reach the core at one time, in the board's order: a DGT bus
change list stamps every change in it with the time it was asked for, and a slow poll
(a 12-board chain, a loaded machine) brings a whole move, its press, the mover
re-centring his piece and the opponent's first touch in one or two lists. The
previous mover's re-centring is no touch of the opponent's (4.3), whatever the stamps.
"""

from __future__ import annotations

import chess
from rules_support import game, kinds, played, run, settings

from drivers.sensors import SquareChange


def opening():
    """1. e4 e5 2. Nf3 Nc6 3. Bb5, played at a human pace with a clock."""
    script = game(True)
    for frm, to in (("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "b5")):
        script.move(frm, to).press()
    return script


def test_the_re_centring_and_the_opponents_first_lift_in_one_list_are_no_touch():
    # 3... f5: black presses, re-centres his pawn; white lifts his knight: one list
    script = opening().lift("f7").put("f5", "p", after=0.0)
    script.press().wait(-0.25)  # the press in the same list (press() waits 0.25 after)
    script.lift("f5", after=0.0).put("f5", "p", after=0.0).lift("b1").put("c3", "N")
    script.press()
    out = run(script.events, settings(True))
    assert played(out)[-2:] == ["f7f5", "b1c3"]
    assert kinds(out) == []  # before: 4.3b, "the black pawn on f5 ... had to be captured"


def test_the_re_centring_in_the_list_that_completes_the_opponents_move_is_no_touch():
    # 4. Nc3: white presses and re-centres his knight, black plays Nf6, all in one list;
    # then white plays d3 (the knight on c3 was touched before Nf6, by its own mover)
    script = opening().lift("g8").put("f6", "n").press()
    script.lift("b1").put("c3", "N", after=0.0).press().wait(-0.25)
    script.lift("c3", after=0.0).put("c3", "N", after=0.0)
    script.lift("g7", after=0.0).put("g6", "p", after=0.0).press()
    script.lift("d2").put("d3", "P").press()
    out = run(script.events, settings(True))
    assert played(out)[-3:] == ["b1c3", "g7g6", "d2d3"]
    assert kinds(out) == []  # before: 4.3a, "the white knight on c3 ... had to be moved"


def recentred_then_nc3(since_put):
    """3... f5, pressed; black re-centres his pawn: the bus reads the lift, then the
    put back 0.7 s later (``since_put``: the read before it, which did not have it, or
    None: a board that says when, as over USB); white plays Nc3 1 s after."""
    script = opening().lift("f7").put("f5", "p", after=0.1).press().wait(-0.2)
    lifted = script.t
    script.lift("f5", after=0.7)
    since = None if since_put is None else lifted + since_put
    script.events.append(SquareChange(script.t, "f5", "p", since))
    script.pieces[chess.parse_square("f5")] = "p"
    script.wait(1.0).lift("b1").put("c3", "N").press()
    return run(script.events, settings(True))


def test_a_re_centring_whose_put_back_the_bus_reads_a_poll_later_is_no_touch():
    # held 0.05-0.7 s by the reads: as short as a re-centring (before: 4.3b charged)
    out = recentred_then_nc3(since_put=0.05)
    assert played(out)[-2:] == ["f7f5", "b1c3"]
    assert kinds(out) == []


def test_a_piece_held_longer_than_a_re_centring_is_still_a_touch():
    # the same lift, held 0.7 s for sure: the opponent's touch (4.3b), as before
    out = recentred_then_nc3(since_put=None)
    assert played(out)[-2:] == ["f7f5", "b1c3"]
    assert kinds(out) == [("touch_move", "4.3")]


def test_a_re_centring_the_bus_reads_late_after_the_press_is_no_touch():
    # 3... f5, pressed; the re-centring (lift and put back in one list) read 1.2 s
    # after the press, made after the read 0.1 s after it (before: 4.3b charged)
    script = opening().lift("f7").put("f5", "p", after=0.1).press().wait(0.95)
    read_before = script.t - 1.1
    for piece in (None, "p"):
        script.events.append(SquareChange(script.t, "f5", piece, read_before))
    script.wait(1.0).lift("b1").put("c3", "N").press()
    out = run(script.events, settings(True))
    assert played(out)[-2:] == ["f7f5", "b1c3"]
    assert kinds(out) == []
