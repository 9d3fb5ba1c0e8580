"""A live PGN no name can corrupt: hostile names through the daemon's /game.pgn
and through the relay, judged by pgn-extract and python-chess."""

from __future__ import annotations

import asyncio
import uuid

from broadcast_feed import OPERA_GAME, game_feed
from mqtt_helpers import wait_until
from pgn_check import unescape, validated_games

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings, MqttSettings
from daemon.broadcast.relay import Relay
from daemon.game.record import SEVEN_TAG_ROSTER, GameHeaders, GameRecord, clean_tag_value

#: Names that broke the PGN or would: a quote and a newline forging a Result and
#: a tag, a trailing backslash that escapes the closing quote, control and bidi
#: characters, a name far beyond PGN's 255 characters.
FORGER = 'Evil "Name"\n[Result "1-0"]\n[Forged "x'
HOSTILE = [
    FORGER,
    "C:\\players\\",
    "Null\x00Byte \x1b[31mRed\x7f",
    "Bidi\u202eesrever\u200b Zero\u2028Line",
    "x" * 1000 + '"',
]
HONEST = "Ørjan Çağlar 李 O'Brien-Smith (GM) {c} [x] ; %"
GAME = OPERA_GAME  # Morphy's mate: 1-0, 33 plies


def _expected_tags(white: str, black: str, event: str, round_: str, board: str) -> dict:
    return {
        "Event": clean_tag_value(event), "Site": "?", "Round": round_,
        "White": clean_tag_value(white), "Black": clean_tag_value(black), "Result": "1-0",
        "Board": board,
    }  # fmt: skip


def _check(game, expected: dict) -> None:
    tags = {key: unescape(value) for key, value in game.headers.items() if key != "Date"}
    assert tags == expected, "no forged or lost tag, every value as written"
    assert len(list(game.mainline_moves())) == len(GAME)


def test_a_tag_value_is_escaped_and_loses_only_what_cannot_be_shown():
    record = GameRecord(GameHeaders(white="C:\\dir\\", black='say "hi"'))
    text = record.pgn()
    assert '[White "C:\\\\dir\\\\"]' in text and '[Black "say \\"hi\\""]' in text
    assert clean_tag_value("a\nb\tc\x00d\u202ee") == "a b c d e"
    assert clean_tag_value(HONEST) == HONEST, "real names are kept as they are"
    assert len(clean_tag_value("\\" * 1000)) * 2 <= 255, "255 characters once escaped"


def test_an_invalid_tag_name_is_dropped_not_a_broken_file():
    record = GameRecord(GameHeaders(white="A", extra={"Board": "1", 'Bad "key"\n': "x", "": "y"}))
    game = validated_games(record.pgn(), 1)[0]
    assert set(game.headers) == {*SEVEN_TAG_ROSTER, "Board"}


async def test_hostile_names_through_the_daemon_give_a_file_both_readers_accept(live):
    names = [*HOSTILE, HONEST]
    pairs = list(zip(names[0::2], names[1::2], strict=True))
    server = await live(
        event='Open "2026"\n[Round "9"]', round="4",
        boards=[BoardSettings(id=str(n), white=w, black=b) for n, (w, b) in enumerate(pairs, 1)],
    )  # fmt: skip
    for board in range(1, len(pairs) + 1):
        server.publish(game_feed(GAME, result="1-0"), board=str(board))
    async with server.session.get(f"{server.url}/game.pgn") as response:
        assert response.status == 200
        text = await response.text()
    games = validated_games(text, len(pairs))
    for n, (game, (white, black)) in enumerate(zip(games, pairs, strict=True), 1):
        _check(game, _expected_tags(white, black, 'Open "2026"\n[Round "9"]', "4", str(n)))


async def test_hostile_names_through_the_relay_give_a_file_both_readers_accept(broker):
    tournament = f"names-{uuid.uuid4().hex[:6]}"
    settings = BroadcastSettings(
        enabled=False, event="1992", round="3",
        boards=[BoardSettings(id="1", white=FORGER, black="C:\\players\\"),
                BoardSettings(id="2", white=HONEST, black="Null\x00Byte")],
        mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=broker.port,
                          tournament=tournament),
    )  # fmt: skip
    broadcaster = Broadcaster(settings)
    relay = Relay("127.0.0.1", broker.port, tournament, "3", address="127.0.0.1", port=0,
                  event='Club "Open" \\ 2026')  # fmt: skip
    await broadcaster.start()
    await relay.start()
    try:
        for board in ("1", "2"):
            for event in game_feed(GAME, result="1-0"):
                broadcaster.publish(board, event)

        def finished() -> bool:
            feeds = relay.hub.boards
            return all(b in feeds and feeds[b].record.result == "1-0" for b in ("1", "2"))

        assert await asyncio.to_thread(wait_until, finished, 60)
        games = validated_games(relay.hub.pgn(), 2)
    finally:
        await broadcaster.stop()
        await relay.stop()
    event = 'Club "Open" \\ 2026'
    _check(games[0], _expected_tags(FORGER, "C:\\players\\", event, "3", "1"))
    _check(games[1], _expected_tags(HONEST, "Null\x00Byte", event, "3", "2"))
