"""Board reports that reach the core at one time, in the board's order: a DGT bus
change list stamps every change in it with the time it was asked for, and a slow poll
(a 12-board chain, a loaded machine) brings a whole move, its press, the mover
re-centring his piece and the opponent's first touch in one or two lists. The
previous mover's re-centring is no touch of the opponent's (4.3), whatever the stamps.
"""

from __future__ import annotations

from rules_support import game, kinds, played, run, settings


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
