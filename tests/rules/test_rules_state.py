"""The phase table: what a user would see go wrong if two phases could mix."""

from __future__ import annotations

import pytest
from rules_support import Script, kinds, of_type, run

from daemon.rules import RulesSettings
from daemon.rules.state import TRANSITIONS, GameState, Phase, StateError, Trigger


def test_every_phase_has_a_row_and_a_trigger_outside_the_table_is_refused():
    assert set(TRANSITIONS) == set(Phase)
    state = GameState()
    with pytest.raises(StateError):
        state.enter(Trigger.PRESS)  # no game: a clock press cannot be pending
    assert state.phase is Phase.NO_GAME


def test_an_alarm_stays_open_through_a_press_and_closes_once_on_restore():
    state = GameState(Phase.PLAYING)
    state.enter(Trigger.REPORT, reported=b"x" * 64, touch_binds=True)
    state.enter(Trigger.PRESS)
    assert state.phase is Phase.PRESSED and state.owed_restore and state.reported == b"x" * 64
    state.enter(Trigger.RESTORE)
    assert state.phase is Phase.PRESSED and not state.owed_restore and state.reported is None
    assert state.touch_binds  # 7.4a: the touch before the illegal move still binds
    state.enter(Trigger.START)
    assert not state.touch_binds


def test_an_illegal_move_pressed_then_put_back_gives_one_alarm_and_one_restore():
    script = Script().dump().start_clock().wait(0.5)
    script.lift("g1").put("g3", "N").press().settle()  # Ng1-g3 is no knight move
    script.lift("g3").put("g1", "N").settle()
    out = run(script.events, RulesSettings())
    assert kinds(out) == [("illegal_move", "7.4")]
    assert len(of_type(out, "position_restored")) == 1
