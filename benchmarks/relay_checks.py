"""What the relay's checks cost per message (issue 18): every message from the
broker is validated before it touches a board.

    python -m benchmarks.relay_checks [--plies 40,120,300] [--repeat 200]

For a game of N half-moves, as a board's real publisher makes the messages: the
CPU time of ``check_envelope`` for one move event, of ``check_state`` for the
retained state after the last move (a state comes with every event and every
clock report), of ``replays`` (the moves' legality, checked only when a state is
loaded: a relay joining late, or after a hole), and of the relay's whole
``_on_message`` for a state it already holds (the common case: a clock tick).
Then what a board's key adds (issue 24): the daemon signing that state
(``boardkeys.sign``) and a relay with the hall's key checking it (``verify``).
Numbers, not a test: the machine and its load decide them.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence

import chess
import paho.mqtt.client as mqtt

from benchmarks.common import footer, header
from daemon.broadcast import boardkeys
from daemon.broadcast.hub import Hub
from daemon.broadcast.mqtt import MqttPublisher
from daemon.broadcast.relay import Relay
from daemon.broadcast.relaycheck import check_envelope, check_state, replays
from daemon.broadcast.settings import BoardSettings, BroadcastSettings, MqttSettings
from daemon.game.events import ClockUpdate, GameStart, Move


def long_game(plies: int, seed: int = 18) -> list[str]:
    """A legal game of up to ``plies`` half-moves, as UCI: a seeded random walk
    that never ends the game (the page's layout test plays one too)."""
    rng, board, ucis = random.Random(seed), chess.Board(), []
    while len(ucis) < plies:
        moves = []
        for candidate in sorted(board.legal_moves, key=chess.Move.uci):
            board.push(candidate)
            if not board.is_game_over(claim_draw=True):
                moves.append(candidate)
            board.pop()
        if not moves:
            break  # every move ends the game: the game is as long as it gets
        move = rng.choice(moves)
        board.push(move)
        ucis.append(move.uci())
    return ucis


def _game(plies: int) -> list[dict]:
    board = chess.Board()
    feed = [GameStart(t=0.0, fen=board.fen()).to_dict()]
    clocks = {"white": 5400.0, "black": 5400.0}
    for ply, uci in enumerate(long_game(plies), 1):
        move = chess.Move.from_uci(uci)
        by = "white" if board.turn == chess.WHITE else "black"
        san = board.san(move)
        board.push(move)
        clocks[by] -= 20.0
        feed.append(Move(t=20.0 * ply, ply=ply, uci=uci, san=san, fen=board.fen(),
                         by=by, speech=san, clock=dict(clocks)).to_dict())  # fmt: skip
        feed.append(ClockUpdate(t=20.0 * ply + 0.01, white=clocks["white"],
                                black=clocks["black"], running=by).to_dict())  # fmt: skip
    return feed


def _messages(plies: int) -> tuple[bytes, bytes]:
    """The last move event's payload and the last state, as the publisher sends them."""
    settings = BroadcastSettings(
        enabled=False, round="1", boards=[BoardSettings(id="1", white="A", black="B")],
        mqtt=MqttSettings(enabled=True, tournament="bench"),
    )  # fmt: skip
    hub = Hub(settings, start_seq=100)
    publisher = MqttPublisher(settings, "1", hub)
    hub.listeners.append(publisher.on_feed)
    for event in _game(plies):
        hub.publish("1", event)
    moves = [p for p in publisher.waiting if b'"type":"move"' in p]
    return moves[-1], publisher.state_message()


#: A board's key and a state's topic, for the cost of signing and checking.
KEY, TOPIC = boardkeys.board_key("bench hall key", "bench", "1"), "dgt-bridge/bench/1/1/state"


def _micro(func: Callable[[], object], repeat: int) -> float:
    """Median CPU microseconds of one call."""
    times = []
    for _ in range(repeat):
        start = time.process_time_ns()
        func()
        times.append(time.process_time_ns() - start)
    return statistics.median(times) / 1000


def run(plies_list: Sequence[int], repeat: int) -> None:
    header("relay checks: CPU per message")
    print(f"{'plies':>6} {'state KiB':>9} {'event':>9} {'state':>9} {'replay':>9} "
          f"{'relay, held state':>18} {'sign':>9} {'verify':>9}")  # fmt: skip
    for plies in plies_list:
        event, state = _messages(plies)
        relay = Relay("127.0.0.1", 1883, "bench", "1", address="127.0.0.1", port=0)
        message = mqtt.MQTTMessage(topic=f"{relay.base}/1/state".encode())
        message.payload = state
        relay._on_message(relay.client, None, message)  # loaded once
        parsed = json.loads(state)
        costs = [
            _micro(lambda e=event: check_envelope(e, "1"), repeat),
            _micro(lambda s=state: check_state(s, "1"), repeat),
            _micro(lambda p=parsed: replays(p), repeat),
            _micro(lambda m=message, r=relay: r._on_message(r.client, None, m), repeat),
        ]
        signed = boardkeys.sign(KEY, TOPIC, state)
        costs += [
            _micro(lambda s=state: boardkeys.sign(KEY, TOPIC, s), repeat),
            _micro(lambda s=signed: boardkeys.verify(KEY, TOPIC, s), repeat),
        ]
        cells = " ".join(f"{cost:>7.0f}us" for cost in costs[:3])
        keyed = " ".join(f"{cost:>7.0f}us" for cost in costs[4:])
        print(f"{plies:>6} {len(state) / 1024:>9.1f} {cells} {costs[3]:>16.0f}us {keyed}")
    footer()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", default="40,120,300")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    run([int(p) for p in args.plies.split(",")], args.repeat)


if __name__ == "__main__":
    main()
