"""Fault trials as a trusted system runs them: ``dgt-bridge run`` against the emulator.

Every trial plays real games by human hands (``drivers.simulators.handling``) on the emulated
DGT board and DGT 3000 against the daemon in its own process (``python -m daemon
run``, the shipped configuration, ``clock.sides: auto``), does something bad to it,
and checks what a trusted system must guarantee: every move of the game in the
journal's PGN, in order (moves lost: 0), no irregularity nobody made (false
irregularities: 0), no traceback, and the daemon still running.

Trial kinds (``--kinds``):

- ``kill``: ``kill -9`` at three random points of a game: between moves, mid-move,
  and once while one to three moves and their clock presses are made with the daemon
  down (two or more come back from the board's EEPROM log at the restart).
- ``unplug``: the cable out at a random moment for one to four moves (presses
  included), back in; a board with its EEPROM log (``unplug``) and one without
  (``unplug_no_eeprom``, one or two moves: beyond, transposing lines are the rule
  and the arbiter is asked).
- ``silent``: the board stops answering (the port stays) for one to three moves.
- ``garbage``: noise bytes between messages, single corrupted bytes inside
  messages (a data byte with its top bit set, a piece code above 15), and
  well-formed but false field updates (a piece flickering onto an empty square
  and off again within one scan).
- ``disk_full``: the journal's files may not grow (``RLIMIT_FSIZE`` on the daemon,
  set from outside) for a few moves; ``disk_gone``: the storage directory replaced
  by a file for a few moves (root ignores permissions, so read-only is simulated
  this way); then the disk comes back.
- ``clock_unplugged``: the DGT 3000 unplugged from the board mid-game (the board
  reports "no clock"); moves then count on the settle time.
- ``broker``: the MQTT broker (our own Mosquitto on loopback) killed mid-game.
- ``tournament``: 20 games back to back in one daemon, the players changing
  colours each game (White's clock side alternates), the clock left running while
  the pieces are set up again.

- ``chain_kill``, ``chain_pull``, ``chain_corrupt``: four boards on one chain in DGT
  bus mode, each its own game: the daemon SIGKILLed and restarted 10 s later while
  the games go on, a board pulled out with its power on and plugged in again,
  bursts of replies with bad checksums (``benchmarks.chainfaults``).

``--quick``: one short trial of each kind (seconds each).
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from benchmarks import chainfaults
from benchmarks.common import footer, header
from benchmarks.daemonrun import (
    RunningDaemon,
    clock_tick,
    daemon_env,
    pgn_moves,
    press_indices,
    shipped_games,
)
from drivers.dgt import protocol
from drivers.sensors import BoardDump, ClockReport, SensorEvent
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import Timing, human_sensor_log

SPEED = 10.0  # the hands play this much faster than real time...
SETTLE = 0.6 / SPEED  # ...and the rules core's settle time shrinks alike
BRISK = Timing(think=(0.6, 2.0), before_press=(0.2, 0.5))
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


# --- games and checks ---------------------------------------------------------------------


def start_daemon(
    port: str, storage: Path, extra_env: dict[str, str] | None = None
) -> RunningDaemon:
    """The shipped daemon on ``port``, its settle time shrunk to the hands' speed."""
    return RunningDaemon(port, storage, daemon_env(SETTLE, extra_env))


@dataclass
class Trial:
    kind: str
    moves: int = 0  # moves of the game played
    lost: int = 0  # moves missing from the PGN (or wrong)
    false_irregularities: int = 0
    ok: bool = False
    notes: list[str] = field(default_factory=list)
    how: str = ""  # how moves made during an outage came back (moves_recovered)
    setup: str = ""  # what the trial did (printed when it fails)
    games: tuple[int, int] = (0, 0)  # tournament: games right / games


def irregularity_note(event: dict[str, Any]) -> str:
    """A false irregularity in a few words (kind, by, squares, detail, time)."""
    squares = " ".join(event.get("squares") or [])
    text = f"{event.get('kind')} {event.get('by') or ''} {squares} {event.get('detail') or ''}"
    return " ".join(text.split()) + f" at t={event.get('t')}"


def judge(trial: Trial, expected: list[str], recorded: list[str], feeds: list[dict]) -> Trial:
    trial.moves = len(expected)
    same = 0
    for a, b in zip(expected, recorded, strict=False):
        if a != b:
            break
        same += 1
    trial.lost = len(expected) - same + max(0, len(recorded) - len(expected))
    irregular = [e for e in feeds if e.get("type") == "irregularity"]
    trial.false_irregularities = len(irregular)
    trial.notes += [irregularity_note(e) for e in irregular]
    trial.ok = trial.lost == 0 and trial.false_irregularities == 0 and not trial.notes
    return trial


def prefix_log(game: chess.pgn.Game, plies: int, seed: int, **kwargs: Any):
    moves = list(game.mainline_moves())[:plies]
    log = human_sensor_log(game.board(), moves, seed=seed, with_clock=True, timing=BRISK, **kwargs)
    return [m.uci() for m in moves], log


def play(emulator: BoardEmulator, events: list[SensorEvent]) -> None:
    if events:
        emulator.play(events, speed=SPEED)
        emulator.wait_played(120)


def play_out(
    trial: Trial,
    emulator: BoardEmulator,
    daemon: RunningDaemon,
    rest: list[SensorEvent],
    plies: int,
) -> None:
    """The rest of the game; then the daemon must have decided its last move."""
    play(emulator, rest)
    daemon.find(lambda e: e["type"] == "move" and e["ply"] == plies, 20)
    daemon.drain(0.5)
    if daemon.traceback():
        trial.notes.append("traceback")


def judged(trial: Trial, storage: Path, expected: list[str], feeds: list[dict]) -> Trial:
    """The trial judged by the newest journal's PGN and the feed."""
    journals = sorted(storage.glob("*.jsonl"))
    return judge(trial, expected, pgn_moves(journals[-1]) if journals else [], feeds)


# --- the trials ------------------------------------------------------------------------------


def trial_kill(work: Path, rng: random.Random, plies: int) -> Trial:
    trial = Trial("kill")
    game = rng.choice(shipped_games())
    expected, log = prefix_log(game, plies, rng.randrange(10**6))
    marks = press_indices(log)
    between = rng.choice(marks[1 : max(2, len(marks) // 3)])
    mid = rng.randrange(between + 3, len(log) - 3)
    down_press = rng.choice([m for m in marks if m > mid + 2] or [marks[-1]])
    kills = [(between, False), (mid, False), (down_press - 5, True)]
    moves_down = rng.randint(1, 3)  # made with their presses while the daemon is down
    storage = work / "games"
    feeds: list[dict] = []
    with BoardEmulator(work) as emulator:
        play(emulator, log[:1])
        daemon = start_daemon(emulator.port_path, storage)
        try:
            daemon.find(lambda e: e["type"] == "game_start")
            start = 1
            for cut, move_while_down in kills:
                cut = max(cut, start)
                play(emulator, log[start:cut])
                time.sleep(rng.uniform(0.0, 0.3))
                daemon.drain(0.2)
                feeds += daemon.seen
                daemon.kill()
                start = cut
                if move_while_down:  # moves and their presses while the daemon is down
                    later = [m for m in marks if m > cut]
                    end = later[min(moves_down, len(later)) - 1] if later else len(log)
                    play(emulator, log[cut:end])
                    start = end
                daemon = start_daemon(emulator.port_path, storage)
                if not daemon.find(lambda e: e["type"] in ("game_resumed", "game_start")):
                    trial.notes.append("no game_resumed after a restart")
                tick = clock_tick(log[:start], 1.0)
                if tick is not None:
                    emulator.apply(tick)
            play_out(trial, emulator, daemon, log[start:], len(expected))
            feeds += daemon.seen
        finally:
            daemon.stop()
    trial.how = ",".join(e["how"] for e in feeds if e["type"] == "moves_recovered")
    journals = sorted(storage.glob("*.jsonl"))
    if len(journals) != 1:
        trial.notes.append(f"{len(journals)} journals")
    return judge(trial, expected, pgn_moves(journals[-1]) if journals else [], feeds)


def trial_outage(work: Path, rng: random.Random, plies: int, how: str) -> Trial:
    """``unplug`` (EEPROM), ``unplug_no_eeprom`` or ``silent``."""
    trial = Trial(how)
    game = rng.choice(shipped_games())
    expected, log = prefix_log(game, plies, rng.randrange(10**6))
    marks = press_indices(log)
    most = 2 if how == "unplug_no_eeprom" else (3 if how == "silent" else 4)
    first = rng.randrange(2, len(marks) - most - 2)
    count = rng.randint(1, most)
    cut, back = marks[first], marks[first + count]
    if rng.random() < 0.5 and how != "unplug_no_eeprom":
        cut = rng.randrange(marks[first - 1] + 1, cut)  # mid-move, a piece in the hand
    trial.setup = (  # what the trial did, to replay one that failed
        f"{game.headers.get('White')}-{game.headers.get('Black')}, out from event {cut} "
        f"(after move {first}) to move {first + count}"
    )
    storage = work / "games"
    with BoardEmulator(work, ee_log=how != "unplug_no_eeprom") as emulator:
        play(emulator, log[:1])
        daemon = start_daemon(emulator.port_path, storage)
        try:
            daemon.find(lambda e: e["type"] == "game_start")
            play(emulator, log[1:cut])
            daemon.drain(0.2)
            if how == "silent":
                emulator.set_silent(True)
            else:
                emulator.unplug()
            if not daemon.find(lambda e: e["type"] == "connection", 15):
                trial.notes.append("loss not reported")
            play(emulator, log[cut:back])
            if how == "silent":
                emulator.set_silent(False)
            else:
                emulator.replug()
            if not daemon.find(
                lambda e: e["type"] == "connection" and e["state"] == "connected", 30
            ):
                trial.notes.append("not reconnected")
            daemon.drain(1.0)
            play_out(trial, emulator, daemon, log[back:], len(expected))
            recovered = [e for e in daemon.seen if e["type"] == "moves_recovered"]
            trial.how = ",".join(e["how"] for e in recovered)
        finally:
            daemon.stop()
    return judged(trial, storage, expected, daemon.seen)


def trial_garbage(work: Path, rng: random.Random, plies: int) -> Trial:
    trial = Trial("garbage")
    game = rng.choice(shipped_games())
    expected, log = prefix_log(game, plies, rng.randrange(10**6))
    storage = work / "games"
    with BoardEmulator(work) as emulator:
        play(emulator, log[:1])
        daemon = start_daemon(emulator.port_path, storage)
        try:
            daemon.find(lambda e: e["type"] == "game_start")
            marks = press_indices(log)
            start = 1
            for mark in marks:
                play(emulator, log[start:mark])
                start = mark
                kind = rng.randrange(4)
                if kind == 0:  # noise between messages
                    emulator.inject(bytes(rng.randrange(256) for _ in range(rng.randint(1, 12))))
                elif kind == 1:  # a field update with a data byte corrupted (top bit set)
                    frame = bytearray(protocol.encode_field_update(rng.randrange(64), 1))
                    frame[rng.randrange(3, 5)] |= 0x80
                    emulator.inject(bytes(frame))
                elif kind == 2:  # a piece code that is no piece
                    emulator.inject(protocol.encode_field_update(rng.randrange(64), 0x30 | 0x0F))
                else:  # well-formed but false: a piece flickers onto an empty square
                    empty = [i for i in range(64) if emulator.codes[i] == 0]
                    square = rng.choice(empty)
                    emulator.inject(protocol.encode_field_update(square, rng.randint(1, 12)))
                    emulator.inject(protocol.encode_field_update(square, 0))
            play_out(trial, emulator, daemon, log[start:], len(expected))
        finally:
            daemon.stop()
    return judged(trial, storage, expected, daemon.seen)


def trial_disk(work: Path, rng: random.Random, plies: int, how: str) -> Trial:
    trial = Trial(how)
    game = rng.choice(shipped_games())
    expected, log = prefix_log(game, plies, rng.randrange(10**6))
    marks = press_indices(log)
    bad_from = rng.randrange(2, len(marks) // 2)
    bad_to = bad_from + rng.randint(2, 5)
    storage = work / "games"
    aside = work / "games-aside"
    with BoardEmulator(work) as emulator:
        play(emulator, log[:1])
        daemon = start_daemon(emulator.port_path, storage)
        try:
            daemon.find(lambda e: e["type"] == "game_start")
            play(emulator, log[1 : marks[bad_from]])
            daemon.drain(0.3)
            if how == "disk_full":
                size = max(p.stat().st_size for p in storage.iterdir())
                resource.prlimit(
                    daemon.process.pid, resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY)
                )
            else:
                storage.rename(aside)
                storage.write_text("not a directory")
            play(emulator, log[marks[bad_from] : marks[bad_to]])
            daemon.drain(0.5)
            if how == "disk_full":
                unlimited = resource.RLIM_INFINITY
                resource.prlimit(daemon.process.pid, resource.RLIMIT_FSIZE, (unlimited, unlimited))
            else:
                storage.unlink()
                aside.rename(storage)
            play_out(trial, emulator, daemon, log[marks[bad_to] :], len(expected))
            codes = [e.get("code") for e in daemon.seen if e["type"] == "notice"]
            if "storage_error" not in codes:
                trial.notes.append("storage error not reported")
            if codes.count("storage_error") > 1:
                trial.notes.append("storage error reported more than once")
            if "storage_recovered" not in codes:
                trial.notes.append("recovery not reported")
        finally:
            daemon.stop()
            with contextlib.suppress(OSError):
                if storage.is_file():
                    storage.unlink()
                    aside.rename(storage)
    journals = sorted(storage.glob("*.jsonl"))
    recorded = pgn_moves(journals[-1]) if journals else []
    if journals:
        lines = [json.loads(x) for x in journals[-1].read_text().splitlines() if x.strip()]
        journal_moves = [e["uci"] for e in lines if e.get("type") == "move"]
        if journal_moves != expected:
            trial.notes.append("journal lines differ from the moves")
    return judge(trial, expected, recorded, daemon.seen)


def trial_clock_unplugged(work: Path, rng: random.Random, plies: int) -> Trial:
    trial = Trial("clock_unplugged")
    game = rng.choice(shipped_games())
    expected, log = prefix_log(game, plies, rng.randrange(10**6))
    marks = press_indices(log)
    cut = rng.randrange(3, len(marks) - 3)
    storage = work / "games"
    with BoardEmulator(work) as emulator:
        play(emulator, log[:1])
        daemon = start_daemon(emulator.port_path, storage)
        try:
            daemon.find(lambda e: e["type"] == "game_start")
            play(emulator, log[1 : marks[cut]])
            daemon.drain(0.2)
            emulator.clock_attached = False
            emulator.apply(clock_tick(log[: marks[cut]], 1.0) or log[marks[cut] - 1])
            play_out(trial, emulator, daemon, log[marks[cut] :], len(expected))
        finally:
            daemon.stop()
    return judged(trial, storage, expected, daemon.seen)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def trial_broker(work: Path, rng: random.Random, plies: int) -> Trial:
    trial = Trial("broker")
    if not Path(MOSQUITTO).exists():
        trial.notes.append("mosquitto not installed")
        return trial
    game = rng.choice(shipped_games())
    expected, log = prefix_log(game, plies, rng.randrange(10**6))
    marks = press_indices(log)
    cut = rng.randrange(2, len(marks) - 2)
    port = free_port()
    config = work / "mosquitto.conf"
    config.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\nuser {getpass.getuser()}\n"
    )
    broker = subprocess.Popen(
        [MOSQUITTO, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(0.5)
    storage = work / "games"
    env = {
        "DGT_BRIDGE_BROADCAST__ENABLED": "true",
        "DGT_BRIDGE_BROADCAST__ADDRESS": "127.0.0.1",
        "DGT_BRIDGE_BROADCAST__PORT": "0",
        "DGT_BRIDGE_BROADCAST__MQTT__ENABLED": "true",
        "DGT_BRIDGE_BROADCAST__MQTT__HOST": "127.0.0.1",
        "DGT_BRIDGE_BROADCAST__MQTT__PORT": str(port),
    }
    try:
        with BoardEmulator(work) as emulator:
            play(emulator, log[:1])
            daemon = start_daemon(emulator.port_path, storage, env)
            try:
                daemon.find(lambda e: e["type"] == "game_start")
                play(emulator, log[1 : marks[cut]])
                broker.send_signal(signal.SIGKILL)  # the broker gone
                broker.wait(10)
                play_out(trial, emulator, daemon, log[marks[cut] :], len(expected))
                if daemon.process.poll() is not None:
                    trial.notes.append("the daemon stopped")
            finally:
                daemon.stop()
    finally:
        if broker.poll() is None:
            broker.kill()
    return judged(trial, storage, expected, daemon.seen)


def trial_tournament(work: Path, rng: random.Random, plies: int, count: int) -> Trial:
    """``count`` games back to back, ``sides: auto``; one trial, every game checked."""
    trial = Trial("tournament")
    pool = shipped_games()
    storage = work / "games"
    played: list[list[str]] = []
    with BoardEmulator(work) as emulator:
        first = pool[0]
        emulator.play([BoardDump(0.0, first.board().board_fen())])
        emulator.wait_played(10)
        daemon = start_daemon(emulator.port_path, storage)
        try:
            t = 0.0
            for number in range(count):
                game = pool[number % len(pool)]
                expected, log = prefix_log(game, plies, 1000 + number, start_time=t)
                played.append(expected)
                emulator.white_on_left = number % 2 == 0  # the players change colours
                # The clock is not reset: it runs on from the last game.
                if number:
                    log = [e for e in log if not (isinstance(e, ClockReport) and e.running is None)]
                    emulator.play([BoardDump(t, "8/8/8/8/8/8/8/8")], speed=SPEED)
                    emulator.wait_played(10)
                starts = sum(1 for e in daemon.seen if e["type"] == "game_start")
                play(emulator, log[:1])
                if not daemon.find(
                    lambda e, s=starts: (
                        e["type"] == "game_start"
                        and sum(1 for x in daemon.seen if x["type"] == "game_start") > s
                    ),
                    10,
                ):
                    trial.notes.append(f"game {number + 1} did not start")
                play(emulator, log[1:])
                last = len(expected)
                daemon.find(lambda e, n=last: e["type"] == "move" and e["ply"] == n, 20)
                daemon.drain(0.3)
                t = log[-1].t + 5
            if daemon.traceback():
                trial.notes.append("traceback")
        finally:
            daemon.stop()
    journals = sorted(storage.glob("*.jsonl"))
    if len(journals) != count:
        trial.notes.append(f"{len(journals)} journals for {count} games")
    trial.moves = sum(len(g) for g in played)
    wrong_games = 0
    for expected, journal in zip(played, journals, strict=False):
        recorded = pgn_moves(journal)
        if recorded != expected:
            wrong_games += 1
            trial.lost += len(expected) - sum(1 for _ in zip(expected, recorded, strict=False))
    irregular = [e for e in daemon.seen if e["type"] == "irregularity"]
    trial.false_irregularities = len(irregular)
    trial.notes += [irregularity_note(e) for e in irregular]
    trial.notes += [f"{wrong_games} games wrong"] if wrong_games else []
    trial.ok = not trial.notes and trial.lost == 0 and trial.false_irregularities == 0
    trial.games = (count - wrong_games, count)
    return trial


KINDS = (
    "kill",
    "unplug",
    "unplug_no_eeprom",
    "silent",
    "garbage",
    "disk_full",
    "disk_gone",
    "clock_unplugged",
    "broker",
    "tournament",
    *chainfaults.KINDS,
)
FULL = {
    "kill": 24,
    "unplug": 12,
    "unplug_no_eeprom": 8,
    "silent": 6,
    "garbage": 6,
    "disk_full": 3,
    "disk_gone": 3,
    "clock_unplugged": 4,
    "broker": 3,
    "tournament": 1,
    "chain_kill": 6,
    "chain_pull": 4,
    "chain_corrupt": 3,
}


def run_trial(kind: str, work: Path, rng: random.Random, plies: int, games_per_day: int) -> Trial:
    if kind == "kill":
        return trial_kill(work, rng, plies)
    if kind in ("unplug", "unplug_no_eeprom", "silent"):
        return trial_outage(work, rng, plies, kind)
    if kind == "garbage":
        return trial_garbage(work, rng, plies)
    if kind in ("disk_full", "disk_gone"):
        return trial_disk(work, rng, plies, kind)
    if kind == "clock_unplugged":
        return trial_clock_unplugged(work, rng, plies)
    if kind == "broker":
        return trial_broker(work, rng, plies)
    if kind in chainfaults.KINDS:
        return chainfaults.run_chain_trial(kind, work, rng, min(plies, 24), Trial(kind), judge)
    return trial_tournament(work, rng, plies, games_per_day)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one short trial of each kind")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated trial kinds")
    parser.add_argument("--trials", type=int, help="trials of each kind (default: see FULL)")
    parser.add_argument("--plies", type=int, help="moves per game (default 30, quick 14)")
    parser.add_argument("--games", type=int, help="games of the tournament day (default 20)")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}")
    plies = args.plies or (14 if args.quick else 30)
    per_day = args.games or (3 if args.quick else 20)
    header("fault trials: dgt-bridge run against the emulated board")
    print(f"speed x{SPEED:g}, settle {SETTLE:.3f} s, {plies} plies a game, seed {args.seed}")
    rng = random.Random(args.seed)
    results: dict[str, list[Trial]] = {}
    for kind in kinds:
        trials = args.trials or (1 if args.quick else FULL[kind])
        for number in range(trials):
            with tempfile.TemporaryDirectory(prefix=f"faults-{kind}-") as work:
                started = time.monotonic()
                try:
                    trial = run_trial(kind, Path(work), rng, plies, per_day)
                except Exception as exc:  # a broken trial is a failed trial, said plainly
                    trial = Trial(kind, notes=[f"trial error: {exc!r}"])
                took = time.monotonic() - started
            results.setdefault(kind, []).append(trial)
            status = "ok" if trial.ok else "FAILED " + "; ".join(trial.notes)
            if trial.how:
                status += f" (recovered: {trial.how})"
            if trial.setup and not trial.ok:
                status += f" [{trial.setup}]"
            print(
                f"  {kind} #{number + 1}: {trial.moves} moves, lost {trial.lost}, "
                f"false irregularities {trial.false_irregularities}, {took:.1f} s: {status}",
                flush=True,
            )
    print()
    print(f"{'trial':<18} {'survived':>10} {'moves':>7} {'lost':>5} {'false irr.':>10}")
    total_ok = total = 0
    for kind, trials in results.items():
        ok = sum(t.ok for t in trials)
        total_ok += ok
        total += len(trials)
        moves = sum(t.moves for t in trials)
        lost = sum(t.lost for t in trials)
        false = sum(t.false_irregularities for t in trials)
        extra = ""
        if kind == "tournament" and trials:
            right, count = trials[0].games
            extra = f"  ({right}/{count} games right)"
        hows = [t.how for t in trials if t.how]
        if hows:
            extra += "  (recovered by " + ", ".join(sorted(set(",".join(hows).split(",")))) + ")"
        print(f"{kind:<18} {f'{ok}/{len(trials)}':>10} {moves:>7} {lost:>5} {false:>10}{extra}")
    print(f"all trials survived: {total_ok}/{total}")
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
