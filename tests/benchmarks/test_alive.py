"""The budget run's features-alive check (benchmarks/alive.py, issue 28) fails a run
in which an output did not deliver: a relay short of a move, a viewer that missed one
or was never served the page, a phrase not heard. Its passing side is shown by
``python -m benchmarks.pibudget --quick`` (a real Mosquitto, relay and daemon)."""

from __future__ import annotations

import threading
from pathlib import Path

from benchmarks.alive import Features, Viewer, crowd_check, lichess_check, moves_in

GAME = ["e2e4", "e7e5", "g1f3"]


def _features(tmp_path: Path, relayed: list[str], streamed: list[str], page: bool) -> Features:
    features = Features(tmp_path)
    features.relayed = lambda: {"1": relayed}  # what the relay's /state.json holds
    features.viewer = Viewer("http://127.0.0.1:9", page_ok=page, moves={"1": streamed})
    return features


def verdicts(features: Features, heard: int) -> dict[str, bool]:
    return {c.feature.split(" ")[0]: c.alive for c in features.checks(GAME, heard, wait=0)}


def test_every_feature_delivered_is_alive(tmp_path: Path) -> None:
    features = _features(tmp_path, GAME, GAME, page=True)
    assert verdicts(features, heard=3) == {"MQTT": True, "page": True, "speech": True}


def test_each_output_that_missed_a_move_fails_the_run(tmp_path: Path) -> None:
    assert not verdicts(_features(tmp_path, GAME[:2], GAME, True), 3)["MQTT"]
    assert not verdicts(_features(tmp_path, GAME[::-1], GAME, True), 3)["MQTT"]
    assert not verdicts(_features(tmp_path, GAME, GAME[1:], True), 3)["page"]
    assert not verdicts(_features(tmp_path, GAME, GAME, False), 3)["page"]  # no page
    assert not verdicts(_features(tmp_path, GAME, GAME, True), 2)["speech"]


def test_a_viewer_that_has_the_last_move_a_moment_after_the_relay_is_alive(
    tmp_path: Path,
) -> None:
    """The viewer is written at most every 0.1 s: a run's last move may reach it after
    the relay has it, and the check waits for it as for the relay."""
    features = _features(tmp_path, GAME, GAME[:2], page=True)
    assert features.viewer is not None
    late = threading.Timer(0.3, features.viewer.moves["1"].append, [GAME[2]])
    late.start()
    try:
        mqtt, page = features.checks(GAME, heard=None, wait=5)
    finally:
        late.cancel()
    assert mqtt.alive and page.alive, page.seen


def test_a_broker_that_never_ran_is_named(tmp_path: Path) -> None:
    features = Features(tmp_path)
    features.problem = "mosquitto is not installed"
    mqtt = features.checks(GAME, 3, wait=0)[0]
    assert not mqtt.alive and mqtt.seen == "mosquitto is not installed"
    assert "mqtt" not in features.settings()  # the daemon is not pointed at no broker


def test_a_hall_is_alive_only_with_every_board_whole(tmp_path: Path) -> None:
    games = {"1": GAME, "2": GAME[:2]}
    features = Features(tmp_path)
    features.relayed = lambda: {"1": GAME, "2": GAME[:1]}  # board 2 short of a move
    features.viewer = Viewer("http://127.0.0.1:9", page_ok=True, moves=dict(games))
    mqtt, page = features.checks(games, heard=None, wait=0)  # no speech in this run
    assert not mqtt.alive and mqtt.seen.startswith("1 of 2 boards whole, 4 of 5 moves; ")
    assert mqtt.seen.endswith("/relay.json did not answer")  # no relay in this test
    assert page.alive


def test_a_board_the_relay_does_not_hold_whole_is_told_with_the_relay_s_reason(
    tmp_path: Path,
) -> None:
    """What the relay says of the board it holds short (``/relay.json``): which of its
    rules held the board's messages back."""
    import http.server
    import json
    import threading

    status = {"boards": {"2": {"held": 0, "rejected": {"a new game ... held": 1}},
                         "1": {"held": 0}}}  # fmt: skip

    class Relay(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(status).encode()
            self.send_response(200 if self.path == "/relay.json" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        features = Features(tmp_path)
        features.relay_port = server.server_address[1]
        features.relayed = lambda: {"1": GAME, "2": GAME[:1]}
        check = features.mqtt_check({"1": GAME, "2": GAME[:2]}, wait=0)
    finally:
        server.shutdown()
    assert not check.alive
    assert check.seen.endswith(
        '; relay on board 2: {"held": 0, "rejected": {"a new game ... held": 1}}'
    ), check.seen


def test_the_viewer_reads_moves_from_envelopes_and_bare_events() -> None:
    envelope = {"seq": 4, "board": "7", "event": {"type": "move", "uci": "e2e4"}}
    assert moves_in(envelope) == [("7", "e2e4")]
    assert moves_in({"type": "move", "uci": "e7e5"}) == [("1", "e7e5")]
    assert moves_in({"type": "clock", "white": 10}) == []
    assert moves_in([1, 2]) == []


def test_a_tls_run_points_the_daemon_and_the_relay_at_the_broker_over_tls(tmp_path: Path) -> None:
    # pibudget --mqtt tls: the daemon checks the broker's certificate against the
    # run's own CA (a plain connection would not reach the TLS-only listener)
    mqtt = Features(tmp_path, tls=True).settings()["mqtt"]
    assert mqtt["tls"] is True and mqtt["ca_file"] == str(tmp_path / "ca.crt")
    assert "tls" not in Features(tmp_path).settings()["mqtt"]


def test_a_hall_s_crowd_of_viewers_is_alive_only_if_each_had_every_move() -> None:
    games = {"1": GAME, "2": GAME[:2]}
    whole = {"page_ok": True, "moves": {"1": GAME, "2": GAME[:2]}, "error": ""}
    assert crowd_check([whole, whole], 2, games).alive
    short = {"page_ok": True, "moves": {"1": GAME, "2": GAME[:1]}, "error": "reset"}
    check = crowd_check([whole, short], 2, games)
    assert not check.alive and "1 of 2 viewers" in check.seen and "reset" in check.seen
    assert not crowd_check([whole], 2, games).alive  # a viewer that never reported
    assert not crowd_check([{**whole, "page_ok": False}] * 2, 2, games).alive


def test_the_lichess_push_is_alive_only_with_every_board_s_whole_game() -> None:
    pgn = (
        '[Event "x"]\n[Board "1"]\n\n1. e4 e5 2. Nf3 *\n\n[Event "x"]\n[Board "2"]\n\n1. e4 e5 *\n'
    )
    assert lichess_check(pgn, 3, {"1": GAME, "2": GAME[:2]}).alive
    assert not lichess_check(pgn, 3, {"1": GAME, "2": GAME}).alive  # board 2 short
    assert not lichess_check("", 0, {"1": GAME}).alive  # never pushed
