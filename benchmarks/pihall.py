"""A whole hall in one daemon on a Raspberry Pi's CPU budget, every output on (issue 28).

    python -m benchmarks.pihall [--hall pi4|zero2w] [--budgets ...] [--plies N] [--quick]
                                [--slow-card]

``--hall pi4`` (the default), the issue's hall on one Pi 4: one ``dgt-bridge run``
(run as the systemd unit runs it: ``benchmarks.daemonrun.BudgetDaemon``) reads

- two DGT bus chains of 12 boards each (two serial ports, 9600 baud each, the chain
  emulator keeping the line's real speed), a different real game on each board at
  blitz pace (3+2, the human-handling model's own times);
- two USB boards that speak, one blind player at each with one earphone
  (``speak: true``, each board its own player), their games played with a clock by
  hands that think 1-1.6 s a move, as in ``benchmarks.pibudget``;

and publishes every board over MQTT with TLS (a real Mosquitto, its certificate
checked against a throw-away CA), pushes the round to lichess (a local endpoint
answering as lichess does: ``benchmarks/lichesspoint.py``) and serves the live page to
100 viewers following ``/events`` (``benchmarks/viewers.py``, each from an address of
its own). ``--hall zero2w``: 12 bus boards and one speaking board, MQTT (plain) and
one viewer, no lichess push.

The daemon's whole process tree (the synthesis worker, the players) is in the CPU
group of each budget in ``--budgets`` (``benchmarks.pibudget``'s calibration and
models: ``pi4`` the tree on one Pi 4 core, ``pi4-cores`` each process on a core of its
own as on the Pi's four; ``zero2w`` and ``zero2w-cores`` alike; ``full`` no quota),
one budget after the other in the same run. The emulators, the broker, the relay,
the viewers and the lichess endpoint run outside it, as other machines would.

Measured, per budget: every board's moves against its game; press -> ``move`` event
on every board (p50/p99 over the boards, and the worst board's p99); for each blind
player press -> the first loud sample of the move's phrase heard (the player is
``benchmarks/record_stream_player.py``, see ``benchmarks.pibudget``); the PSS of the
daemon's tree after the games; its CPU over the games. And every output alive
(``benchmarks.alive``): the relay holds every board's whole game, every viewer had the
page and every board's whole game, lichess's last push holds every board's whole game,
each blind player heard every move. A run in which any of these failed exits 1.

Targets: every move exact; press -> move p99 < 300 ms on every board (Pi 4; the Zero
2 W hall < 500 ms); press -> first sample of speech p99 < 250 ms for each blind player;
PSS reported. ``--slow-card``: every fsync of the daemon takes 20-200 ms
(``benchmarks/slow_fsync.c``, see ``benchmarks.sdcard``); the journal is fsynced as
shipped (``storage.fsync: true``) in every run, on this machine's disk without it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from benchmarks import alive
from benchmarks.alive import Check, Features
from benchmarks.common import GAMES_PGN, footer, header, load_average, percentile
from benchmarks.cpugroups import Budget, ProcessGroups, can_use_cgroups, cpu_group
from benchmarks.daemonrun import SYNTHESIS, BudgetDaemon, compile_sources
from benchmarks.hall import TimedChain, _final, _lags
from benchmarks.keepawake import add_option as add_keep_awake
from benchmarks.keepawake import describe as describe_idle
from benchmarks.keepawake import kept_awake
from benchmarks.latency import StampingEmulator, plan_game, stream_player_setting
from benchmarks.lichesspoint import LichessPoint
from benchmarks.nbody import add_options as add_calibration_options
from benchmarks.pibudget import calibrated_budgets, timed_moves
from benchmarks.processes import descendants, task_run_ns, tree_pss, user_system_seconds
from benchmarks.pyspy import Profile, py_spy, summary
from benchmarks.treesampler import TreeSampler
from benchmarks.viewers import Crowd, Scraped, describe, page_lags
from daemon.storage.journal import journals, read_events
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.gamelogs import distinct_openings
from drivers.simulators.handling import human_sensor_log


@dataclass(frozen=True)
class Shape:
    """A hall: its bus chains' sizes, its speaking boards, how it broadcasts, its targets."""

    chains: tuple[int, ...]
    speaking: int
    viewers: int
    mqtt: str  # plain or tls
    lichess: bool
    lag_target: float  # press -> move p99 on every board, s
    budgets: str
    judged: tuple[str, ...]  # the budgets every verdict must hold at (those measured)

    def describe(self) -> str:
        chains = " + ".join(str(c) for c in self.chains)
        return (
            f"bus chains of {chains} boards, {self.speaking} speaking USB board(s), MQTT "
            f"{self.mqtt}, {self.viewers} viewer(s), lichess push "
            f"{'on' if self.lichess else 'off'}"
        )


HALLS = {
    "pi4": Shape((12, 12), 2, 100, "tls", True, 0.300, "full,pi4-cores,pi4", ("pi4-cores",)),
    "zero2w": Shape(
        (12,), 1, 1, "plain", False, 0.500, "full,zero2w-cores,zero2w", ("zero2w-cores", "zero2w")
    ),
}
#: What speech adds to a move in a hall: press -> first sample heard, every player.
SPEECH_TARGET = 0.250


@dataclass
class Player:
    """One blind player's board: its emulator, its game and where it is heard."""

    board: str
    emulator: StampingEmulator
    plan: Any  # latency.Plan: the sensor log and each ply's deciding press
    expected: list[str]
    log: Path


@dataclass
class HallFigures:
    budget: Budget
    exact: int = 0
    boards: int = 0
    wrong: dict[str, str] = field(default_factory=dict)
    lags: dict[str, list[float]] = field(default_factory=dict)  # press -> move, by board
    #: every bus board's press -> move, with its board and ply
    bus_presses: list[tuple[float, str, int]] = field(default_factory=list)
    speech: dict[str, list[float]] = field(default_factory=dict)  # by blind player's board
    speech_free: dict[str, list[float]] = field(default_factory=dict)
    unspoken: dict[str, int] = field(default_factory=dict)
    #: each blind player's slowest phrases: (press -> first sample, press -> move, ply)
    slow_phrases: dict[str, list[tuple[float, float, int]]] = field(default_factory=dict)
    pss: float = float("nan")
    pss_parts: dict[str, float] = field(default_factory=dict)
    cpu: float = float("nan")  # share of one of this machine's cores over the games
    elapsed: float = 0.0
    alive: list[Check] = field(default_factory=list)
    crowd: str = ""  # the viewers' traffic (``viewers.describe``)
    storms: int = 0  # the viewers' reconnection storms during the games
    page: list[float] = field(default_factory=list)  # feed -> each viewer, every move
    cpu_parts: dict[str, float] = field(default_factory=dict)  # ms run over the games
    #: the daemon process's CPU seconds over the games in user mode and in the kernel
    user_system: tuple[float, float] = (0.0, 0.0)
    profile: list[str] = field(default_factory=list)  # py-spy's summary (``--profile``)
    notes: list[str] = field(default_factory=list)
    #: each chain's commands over the games, and its bytes on the line (both ways)
    line: list[tuple[int, int]] = field(default_factory=list)
    load: tuple[float, float] = (float("nan"), float("nan"))
    restart: Restart | None = None  # the daemon killed and started again (``--restart-at``)

    def all_lags(self) -> list[float]:
        return [lag for lags in self.lags.values() for lag in lags]

    def slowest(self, count: int = 5) -> list[tuple[float, str, int]]:
        """The bus boards' slowest presses: (press -> move, board, ply)."""
        return sorted(self.bus_presses, reverse=True)[:count]

    def bus_lags(self, round_start: bool) -> list[float]:
        """The bus boards' press -> move at the round's first plies
        (``ROUND_START_PLIES``), or at the others."""
        return [
            lag for lag, _, ply in self.bus_presses if (ply <= ROUND_START_PLIES) == round_start
        ]

    def worst_board(self) -> tuple[str, float]:
        """The board whose press -> move p99 is the largest, and that p99."""
        worst = max(self.lags.items(), key=lambda item: p99(item[1]), default=("-", []))
        return worst[0], p99(worst[1])


def _line_use(f: HallFigures) -> str:
    """Each chain's commands a second over the games, and the share of the time its
    line carried bytes (10 bits a byte at 9600 baud): what the daemon's CPU left the
    line (a line busy all the time sets the poll rate; one half idle, the CPU does)."""
    return "; ".join(
        f"chain {n + 1}: {commands / f.elapsed:.1f} commands/s, "
        f"line busy {sent * 10 / 9600 / f.elapsed * 100:.0f} %"
        for n, (commands, sent) in enumerate(f.line)
    )


#: The round's first plies: every board's presses come within a few seconds of each
#: other (24 of ply 1 within 2 s), the burst behind the halls' slowest presses.
ROUND_START_PLIES = 2


def p99(values: list[float]) -> float:
    return percentile(values, 0.99) if values else float("nan")


def tree_cpu_ns(pid: int) -> int:
    """Nanoseconds the daemon's tree has run so far (its live processes' threads)."""
    return sum(sum(task_run_ns(member).values()) for member in descendants(pid))


def hall_config(
    work: Path,
    chains: list[TimedChain],
    players: list[Player],
    broadcast: dict[str, Any],
) -> Path:
    """The hall's configuration: every chain's boards, the speaking boards each with
    its own player, the broadcast's MQTT (and lichess); the rest as shipped."""
    import yaml

    boards: list[dict[str, Any]] = []
    for chain in chains:
        for board in chain.boards:
            boards.append(
                {
                    "id": str(len(boards) + 1),
                    "bus_port": chain.port_path,
                    "bus_serial": board.serial,
                }
            )
    for player in players:
        boards.append(
            {
                "id": player.board,
                "port": player.emulator.port_path,
                "speak": True,
                "speech": {"stream_player": json.loads(stream_player_setting(player.log))},
            }
        )
    tree = {"clock": {"time_control": "3+2"}, "broadcast": broadcast, "boards": boards}
    path = work / "hall.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False), encoding="utf-8")
    return path


def as_game(moves: list[chess.Move]) -> chess.pgn.Game:
    """The moves as a game from the start position (what ``plan_game`` plays)."""
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    for move in moves:
        node = node.add_variation(move)
    return game


def bus_moves(daemon: BudgetDaemon) -> dict[str, list[tuple[int, str, float]]]:
    """Each board's ``move`` events (ply, uci, monotonic time), in the feed's order."""
    moves: dict[str, list[tuple[int, str, float]]] = defaultdict(list)
    with daemon.changed:
        for _, mono, event in daemon.events:
            if event.get("type") == "move":
                moves[str(event.get("board"))].append((int(event["ply"]), str(event["uci"]), mono))
    return moves


@dataclass(frozen=True)
class Options:
    """How a hall is run besides its shape: the page the viewers show, the slow SD
    card's environment, where py-spy's profiles go (None: not profiled)."""

    plies: int
    page: str = "/?wall=fit"
    slow_card: dict[str, str] = field(default_factory=dict)
    profile: Path | None = None
    profile_seconds: float = 0.0  # the games' first seconds only (0: all of them)
    storm_every: float = 0.0  # seconds between the viewers' reconnection storms (0: none)
    scrapers: int = 0  # clients polling /state.json and /game.pgn in turn (``viewers.scrape``)
    scrape_every: float = 1.0  # seconds between two reads of one scraper
    restart_at: float = 0.0  # seconds into the games the daemon is killed and restarted (0: never)


def run_hall(shape: Shape, budget: Budget, options: Options) -> HallFigures:
    """One hall under ``budget``: set up, played, measured, checked."""
    plies = options.plies
    figures = HallFigures(budget)
    bus_count = sum(shape.chains)
    games = distinct_openings(GAMES_PGN, bus_count + shape.speaking, plies)
    expected = {str(i + 1): [m.uci() for m in g] for i, g in enumerate(games[:bus_count])}
    loads = [os.getloadavg()[0]]
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dgt-pihall-")))
        features = Features(work, tls=shape.mqtt == "tls").start()
        stack.callback(features.stop)
        if features.problem:
            figures.notes.append(f"features: {features.problem}")
        lichess = LichessPoint().start() if shape.lichess else None
        if lichess is not None:
            stack.callback(lichess.stop)
        chains: list[TimedChain] = []
        for number, size in enumerate(shape.chains):
            (work / f"chain{number}").mkdir()
            serials = [f"{1025 + 100 * number + i:05d}" for i in range(size)]
            chain = TimedChain(work / f"chain{number}", serials=serials, seed=1 + number)
            chain.start()
            stack.callback(chain.stop)
            chains.append(chain)
        players: list[Player] = []
        for number in range(shape.speaking):
            game = games[bus_count + number]
            (work / f"usb{number}").mkdir()
            emulator = StampingEmulator(directory=work / f"usb{number}")
            emulator.start()
            stack.callback(emulator.stop)
            board = f"s{number + 1}"
            players.append(
                Player(
                    board,
                    emulator,
                    plan_game(as_game(game), plies, True, seed=7 + number),
                    [m.uci() for m in game],
                    work / f"player-{board}.log",
                )
            )
            players[-1].log.touch()
            expected[board] = players[-1].expected
        broadcast = features.settings()
        if lichess is not None:
            broadcast["lichess"] = lichess.settings()
        config = hall_config(work, chains, players, broadcast)
        group = stack.enter_context(cpu_group(budget))
        daemon = BudgetDaemon(group, work, config=config, env=options.slow_card)
        stack.callback(daemon.stop)
        daemon.wait_ready(180)
        read = daemon.boards_read(len(expected), 120)
        if read < len(expected):
            figures.notes.append(f"only {read} of {len(expected)} boards read")
        daemon.wait_started(180)  # speech and the page up
        crowd = Crowd(f"http://127.0.0.1:{daemon.http_port}", shape.viewers, work, options.page,
                      options.scrapers, options.scrape_every)  # fmt: skip
        stack.callback(crowd.stop)
        following = crowd.wait_connected(120)
        if following < shape.viewers:
            figures.notes.append(f"only {following} of {shape.viewers} viewers followed the feed")
        time.sleep(3.0)  # the speech worker's start, the first clock reports
        logs = [
            human_sensor_log(
                chess.Board(), g, seed=1 + i, with_clock=True, clock_seconds=180, increment=2
            )
            for i, g in enumerate(games[:bus_count])
        ]
        paths = (
            group.paths if isinstance(group, ProcessGroups)
            else [group.path] if group is not None else []
        )  # fmt: skip
        sampler = stack.enter_context(TreeSampler(daemon.pid, paths))
        profile = None
        if options.profile is not None:
            out = options.profile / f"pihall-{budget.name}.txt"
            profile = Profile(daemon.pid, out, options.profile_seconds).start()
            stack.callback(profile.stop)
        cpu_before, started = tree_cpu_ns(daemon.pid), time.monotonic()
        user_before, system_before = user_system_seconds(daemon.pid)
        line_before = [(len(c.bus_received), c.bytes_on_line) for c in chains]
        index = 0
        for chain in chains:
            for place in range(len(chain.boards)):
                chain.play_on(place, logs[index], speed=1.0)
                index += 1
        for player in players:
            player.emulator.play(player.plan.events)
        boards: list[BoardEmulator] = [*chains, *(p.emulator for p in players)]
        storms = _Storms(crowd, options.storm_every)

        def start_again(killed: BudgetDaemon) -> BudgetDaemon:
            return BudgetDaemon(group, work, config=config, env=options.slow_card,
                                continues=killed)  # fmt: skip

        restart = Restart(options.restart_at) if options.restart_at else None
        restarter = _Restarter(daemon, restart, len(expected), start_again)
        for played in boards:
            while not played.wait_played(5):
                loads.append(os.getloadavg()[0])
        figures.storms = storms.stop()
        first, daemon = daemon, restarter.finish()
        if daemon is not first:
            stack.callback(daemon.stop)
            figures.restart = restart
        elif restart is not None:
            figures.notes.append(f"no restart: the games ended before {restart.at:.0f} s")
        if restarter.problem:
            figures.notes.append(f"restart: {restarter.problem}")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            moves = bus_moves(daemon)
            if all(_final(moves[b]) == expected[b] for b in expected):
                break
            time.sleep(0.2)
        figures.elapsed = time.monotonic() - started
        figures.line = [
            (len(c.bus_received) - commands, c.bytes_on_line - sent)
            for c, (commands, sent) in zip(chains, line_before, strict=True)
        ]
        spent, _ = sampler.window(time.time() - figures.elapsed, time.time())
        figures.cpu_parts = {part: run for part, (run, _) in spent.items()}
        if profile is not None:
            profile.stop()
            figures.profile = summary(profile.out)
        cpu_now, (user, system) = tree_cpu_ns(daemon.pid), user_system_seconds(daemon.pid)
        if figures.restart is not None:  # the killed daemon's share, and the new one's whole
            figures.cpu_parts = {}  # sampled in the killed daemon's tree only
            cpu_now += figures.restart.cpu_ns_at_kill
            user += figures.restart.user_system_at_kill[0]
            system += figures.restart.user_system_at_kill[1]
        figures.cpu = (cpu_now - cpu_before) / 1e9 / figures.elapsed
        figures.user_system = (user - user_before, system - system_before)
        time.sleep(3.0)  # the last phrases
        figures.pss, figures.pss_parts = tree_pss(daemon.pid)
        moves = bus_moves(daemon)
        figures.boards = len(expected)
        figures.exact = sum(_final(moves[b]) == expected[b] for b in expected)
        figures.wrong = {
            b: " ".join(_final(moves[b])) for b in expected if _final(moves[b]) != expected[b]
        }
        _measure_lags(figures, chains, moves)
        _measure_speech(figures, daemon, players)
        # every output: MQTT's relay, lichess's last push, the viewers, the earphones
        figures.alive.append(features.mqtt_check(expected, wait=30))
        if lichess is not None:
            deadline = time.monotonic() + 30  # the push interval (8 s) and the push
            while not alive.lichess_check(lichess.last, lichess.pushes, expected).alive:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            figures.alive.append(alive.lichess_check(lichess.last, lichess.pushes, expected))
        records = crowd.stop()
        figures.crowd = describe(records)
        shown = {b: [at for _, _, at in m] for b, m in bus_moves(daemon).items()}
        figures.page = page_lags(records, shown)
        figures.alive.append(alive.crowd_check(records, shape.viewers, expected))
        if options.scrapers:
            figures.alive.append(_scrapers_check(crowd.scraped(), options))
        for player in players:
            heard = len(figures.speech.get(player.board, []))
            if figures.restart is not None:  # moves said together after it: by the journal
                game_plies = range(1, len(player.expected) + 1)
                heard = len(heard_plies(work / "games", player.board).intersection(game_plies))
                figures.unspoken[player.board] = len(player.expected) - heard
            figures.alive.append(
                alive.speech_check(
                    heard, len(player.expected), f"blind player at board {player.board}"
                )
            )
    loads.append(os.getloadavg()[0])
    figures.load = (min(loads), max(loads))
    return figures


#: The scrapers' check's name begins so (``_scrapers_check``): a run that had them.
SCRAPERS_SERVED = "scrapers served"


def _scraped(all_figures: list[HallFigures]) -> bool:
    return any(c.feature.startswith(SCRAPERS_SERVED) for f in all_figures for c in f.alive)


def _scrapers_check(scraped: Scraped | None, options: Options) -> Check:
    """Every scraper's read answered, with how long the reads took."""
    what = f"{SCRAPERS_SERVED} ({options.scrapers} reading /state.json and /game.pgn in turn)"
    if scraped is None or not scraped.seconds:
        return Check(what, False, "the scrapers read nothing")
    seconds = scraped.seconds
    return Check(what, scraped.failed == 0,
                 f"{len(seconds)} reads, {scraped.failed} failed; a read took "
                 f"{percentile(seconds, 0.5) * 1e3:.0f} ms (median), "
                 f"{percentile(seconds, 0.99) * 1e3:.0f} ms (p99)")  # fmt: skip


#: Seconds systemd waits before it starts a daemon that died again (the unit's
#: ``RestartSec=``).
RESTART_SEC = 2.0


@dataclass
class Restart:
    """The daemon killed in mid-round and started again as systemd would
    (``--restart-at``): when, how long until READY and until every board's game was
    resumed, and the presses that waited for it."""

    at: float  # seconds into the games
    killed: tuple[float, float] = (float("nan"), float("nan"))  # (wall, monotonic)
    ready: float = float("nan")  # kill -> the new daemon's READY, s
    resumed: float = float("nan")  # kill -> every board's ``game_resumed``, s
    resumed_at: tuple[float, float] = (float("nan"), float("nan"))  # (wall, monotonic)
    boards_resumed: int = 0
    #: the killed daemon's tree's CPU (ns) and its process's user and kernel seconds,
    #: read just before the kill (the run's CPU adds the new daemon's whole)
    cpu_ns_at_kill: int = 0
    user_system_at_kill: tuple[float, float] = (0.0, 0.0)
    #: presses made from the kill until every board was resumed (press -> move, board,
    #: ply): they waited for the restart, and are left out of the lags' targets
    waited: list[tuple[float, str, int]] = field(default_factory=list)

    def waited_for_it(self, pressed: float, decided: float, monotonic: bool = True) -> bool:
        """A move whose press came before every board was resumed and whose ``move``
        event came after the kill: one the restart held up."""
        killed, resumed = (self.killed[1], self.resumed_at[1]) if monotonic else (
            self.killed[0], self.resumed_at[0])  # fmt: skip
        return decided > killed and pressed < resumed


class _Restarter:
    """Kills the daemon ``restart.at`` seconds into the games, waits ``RESTART_SEC``,
    starts it again (``start_again``: the same configuration, storage and page port)
    and times its return."""

    def __init__(self, daemon: BudgetDaemon, restart: Restart | None, boards: int,
                 start_again: Any) -> None:  # fmt: skip
        self.daemon = daemon
        self.restart = restart
        self.boards = boards
        self.start_again = start_again
        self.problem = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if restart is not None:
            self._thread.start()

    def _run(self) -> None:
        restart = self.restart
        assert restart is not None
        if self._done.wait(restart.at):
            return
        old = self.daemon
        restart.cpu_ns_at_kill = tree_cpu_ns(old.pid)
        restart.user_system_at_kill = user_system_seconds(old.pid)
        restart.killed = (time.time(), time.monotonic())
        old.kill()
        time.sleep(RESTART_SEC)
        new = self.daemon = self.start_again(old)
        try:
            new.wait_ready(180)
        except TimeoutError:
            self.problem = "the restarted daemon was not READY within 180 s"
            return
        restart.ready = time.monotonic() - restart.killed[1]
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            with new.changed:
                back = {
                    str(e.get("board"))
                    for _, mono, e in new.events
                    if mono > restart.killed[1] and e.get("type") == "game_resumed"
                }
            restart.boards_resumed = len(back)
            if len(back) >= self.boards:
                restart.resumed_at = (time.time(), time.monotonic())
                restart.resumed = restart.resumed_at[1] - restart.killed[1]
                return
            time.sleep(0.05)
        self.problem = f"only {restart.boards_resumed} of {self.boards} boards resumed in 180 s"

    def finish(self) -> BudgetDaemon:
        """The daemon running now (the restarted one, if it was)."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.daemon


class _Storms:
    """The viewers' reconnection storms, every ``every`` seconds while the games run."""

    def __init__(self, crowd: Crowd, every: float) -> None:
        self.crowd = crowd
        self.every = every
        self.count = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if every > 0:
            self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self.every):
            self.crowd.storm()
            self.count += 1

    def stop(self) -> int:
        """No more storms; how many there were."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.count


def heard_plies(storage: Path, board: str) -> set[int]:
    """The plies the board's journal has as heard on its earphone (``type: speech``,
    ``outcome: heard``): a restart's moves said together in one phrase count each."""
    plies: set[int] = set()
    for path in journals(storage / f"board-{board}"):
        for event in read_events(path):
            if event.get("type") == "speech" and event.get("outcome") == "heard":
                plies.update(p for p in event.get("plies") or [] if isinstance(p, int))
    return plies


def _measure_lags(
    figures: HallFigures, chains: list[TimedChain], moves: dict[str, list[tuple[int, str, float]]]
) -> None:
    """Press -> move on each bus board (the chains' times against the feed's)."""
    first = 0
    for chain in chains:
        names = [str(first + i + 1) for i in range(len(chain.boards))]
        for index, name in enumerate(names):
            played = [a for a in chain.applied if a[0] == index]
            _, press = _lags(played, defaultdict(list), moves, names)
            figures.lags[name] = press
        first += len(names)
    from benchmarks.hall import WORST

    figures.bus_presses = list(WORST)
    WORST.clear()
    restart = figures.restart
    if restart is None:
        return
    decided = {(board, ply): at for board, made in moves.items() for ply, _, at in reversed(made)}
    kept = []
    for lag, board, ply in figures.bus_presses:
        at = decided[(board, ply)]  # the ply's first move event (``_lags``'s)
        if restart.waited_for_it(at - lag, at):
            restart.waited.append((lag, board, ply))
        else:
            kept.append((lag, board, ply))
    figures.bus_presses = kept
    for board in figures.lags:
        figures.lags[board] = [lag for lag, b, _ in kept if b == board]


def _measure_speech(figures: HallFigures, daemon: BudgetDaemon, players: list[Player]) -> None:
    """Press -> move and press -> first sample heard at each speaking board."""
    from benchmarks.latency import read_player_log

    for player in players:
        seen: dict[int, tuple[str, float]] = {}
        with daemon.changed:
            for wall, _, event in daemon.events:
                if event.get("type") == "move" and str(event.get("board")) == player.board:
                    seen.setdefault(int(event["ply"]), (str(event["uci"]), wall))
        presses = {
            ply: player.emulator.applied_at[id(event)]
            for ply, event in player.plan.deciding.items()
            if id(event) in player.emulator.applied_at
        }
        starts, ends = read_player_log(player.log)
        rows, wrong, unspoken = timed_moves(player.expected, seen, presses, starts, ends)
        restart = figures.restart
        if restart is not None:  # the moves the restart held up: apart, as the bus boards'
            held = [r for r in rows if restart.waited_for_it(r.pressed, r.event_at, False)]
            restart.waited += [(r.to_event, player.board, r.ply) for r in held]
            rows = [r for r in rows if r not in held]
        figures.lags[player.board] = [row.to_event for row in rows]
        figures.speech[player.board] = [row.to_speech for row in rows]
        figures.speech_free[player.board] = [row.to_speech for row in rows if not row.still]
        figures.unspoken[player.board] = unspoken + wrong
        figures.slow_phrases[player.board] = sorted(
            ((row.to_speech, row.to_event, row.ply) for row in rows), reverse=True
        )[:5]


# -- the report -------------------------------------------------------------------------


def ms(value: float) -> str:
    return "n/a" if value != value else f"{value * 1e3:.0f}"


def judged_runs(shape: Shape, all_figures: list[HallFigures]) -> list[HallFigures]:
    """Where the verdicts are taken: each of the hall's Pi models measured (the Zero
    2 W's four cores and its one core: the issue wants speech on both), else the last
    budget of the run."""
    found = [f for f in all_figures if f.budget.name in shape.judged]
    return found or all_figures[-1:]


def meets(judged: list[HallFigures], test: Any) -> bool:
    """A target holds at every judged budget."""
    return bool(judged) and all(test(f) for f in judged)


def report(shape: Shape, all_figures: list[HallFigures]) -> bool:
    """The table (every budget side by side) and the verdicts; True if all met."""
    judged = judged_runs(shape, all_figures)
    where = " and ".join(f.budget.name for f in judged) or "-"
    names = [f.budget.name for f in all_figures]
    print("\n| measure | " + " | ".join(names) + f" | target (at {where}) | verdict |")
    print("|---|" + "---|" * len(names) + "---|---|")

    def row(measure: str, cells: list[str], target: str, met: bool | None) -> None:
        ok = "-" if met is None else "meets" if met else "MISSES"
        print(f"| {measure} | " + " | ".join(cells) + f" | {target} | {ok} |")

    row(
        "boards whose every move is exact",
        [f"{f.exact}/{f.boards}" for f in all_figures],
        "all",
        meets(judged, lambda f: f.exact == f.boards > 0),
    )
    row(
        "press -> move, every board: p50 / p99 (ms)",
        [f"{ms(percentile(f.all_lags(), 0.5))} / {ms(p99(f.all_lags()))}" for f in all_figures],
        "",
        None,
    )
    worst = [f.worst_board() for f in all_figures]
    row(
        "press -> move p99 of the worst board (ms)",
        [f"{ms(v)} (board {b})" for b, v in worst],
        f"< {shape.lag_target * 1e3:.0f} ms on every board",
        meets(judged, lambda f: f.worst_board()[1] < shape.lag_target),
    )
    row(
        f"bus boards' press -> move p99, plies 1-{ROUND_START_PLIES} (the round's start: "
        "every board's at once) / the rest (ms)",
        [f"{ms(p99(f.bus_lags(True)))} / {ms(p99(f.bus_lags(False)))}" for f in all_figures],
        "(reported)",
        None,
    )
    players = sorted({b for f in all_figures for b in f.speech})
    for board in players:
        row(
            f"blind player at board {board}: press -> first sample heard p50 / p99 (ms); "
            "pressed after the phrase before ended: n, p99",
            [
                f"{ms(percentile(f.speech.get(board, []), 0.5))} / "
                f"{ms(p99(f.speech.get(board, [])))}; {len(f.speech_free.get(board, []))}, "
                f"{ms(p99(f.speech_free.get(board, [])))}"
                for f in all_figures
            ],
            f"p99 < {SPEECH_TARGET * 1e3:.0f} ms",
            meets(judged, lambda f, b=board: p99(f.speech.get(b, [])) < SPEECH_TARGET),
        )
        row(
            f"blind player at board {board}: moves unspoken or wrong",
            [str(f.unspoken.get(board, "n/a")) for f in all_figures],
            "0",
            meets(judged, lambda f, b=board: f.unspoken.get(b) == 0),
        )
    row(
        "move on the feed -> each viewer has it: p50 / p99 (ms)",
        [f"{ms(percentile(f.page, 0.5))} / {ms(p99(f.page))}" for f in all_figures],
        "(reported)",
        None,
    )
    row(
        "PSS of the daemon's tree after the games (MB)",
        [f"{f.pss:.1f}" for f in all_figures],
        "(reported)",
        None,
    )
    row(
        "the tree's CPU over the games, % of the budget (% of one of our cores)",
        [f"{f.cpu / (f.budget.fraction or 1) * 100:.0f} ({f.cpu * 100:.1f})" for f in all_figures],
        "(reported)",
        None,
    )
    row(
        "every output alive: relay (MQTT)"
        + (", lichess push" if shape.lichess else "")
        + ", every viewer, each earphone"
        + (", every scraper's read" if _scraped(all_figures) else ""),
        [_alive_cell(f) for f in all_figures],
        "all alive (pass/fail)",
        all(f.alive and all(c.alive for c in f.alive) for f in all_figures),
    )
    row(
        "load average (1 min) during the games",
        [f"{f.load[0]:.1f}-{f.load[1]:.1f}" for f in all_figures],
        "",
        None,
    )
    print()
    for f in all_figures:
        parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(f.pss_parts.items()))
        print(f"{f.budget.name}: {f.elapsed:.0f} s of games; PSS by process (MB): {parts}")
        cpu = ", ".join(f"{k} {v / 1e3 / f.elapsed * 100:.1f}"
                        for k, v in sorted(f.cpu_parts.items(), key=lambda kv: -kv[1]))  # fmt: skip
        print(f"{f.budget.name}: CPU over the games by part, % of one of our cores: {cpu}")
        user, system = (seconds / f.elapsed * 100 for seconds in f.user_system)
        print(f"{f.budget.name}: the daemon process over the games, % of one of our cores: "
              f"user {user:.1f}, kernel {system:.1f} ({system / max(user + system, 1e-9):.0%} "
              "in the kernel)")  # fmt: skip
        print(f"{f.budget.name}: viewers: {f.crowd}")
        if f.storms:
            print(f"{f.budget.name}: the viewers' reconnection storms in the games: {f.storms}")
        print(f"{f.budget.name}: bus lines: " + _line_use(f))
        if f.restart is not None:
            print(f"{f.budget.name}: " + _restart_line(f.restart))
        for line in f.profile:
            print(f"{f.budget.name}: py-spy: {line}")
        print(
            f"{f.budget.name}: slowest bus moves: "
            + ", ".join(f"board {b} ply {p} {t * 1e3:.0f} ms" for t, b, p in f.slowest())
        )
        for board, phrases in sorted(f.slow_phrases.items()):
            print(
                f"{f.budget.name}: blind player at board {board}, slowest phrases (press -> "
                "first sample, of which press -> move): "
                + ", ".join(f"ply {p} {s * 1e3:.0f} ms ({m * 1e3:.0f})" for s, m, p in phrases)
            )
        for board, moves in f.wrong.items():
            print(f"{f.budget.name}: board {board} WRONG: {moves}")
        for check in f.alive:
            print(
                f"{f.budget.name}: {check.feature}: "
                f"{'alive' if check.alive else 'DEAD'} ({check.seen})"
            )
        for note in f.notes:
            print(f"{f.budget.name}: NOTE {note}")
    met = meets(judged, lambda f: f.exact == f.boards and f.worst_board()[1] < shape.lag_target)
    met &= meets(judged, lambda f: all(p99(v) < SPEECH_TARGET for v in f.speech.values()))
    return met


def _restart_line(restart: Restart) -> str:
    """What the restart cost: its times, and the presses that waited for it."""
    waited = sorted(restart.waited, reverse=True)
    lags = [lag for lag, _, _ in waited]
    return (
        f"restart (SIGKILL {restart.at:.0f} s into the games, started again "
        f"{RESTART_SEC:.0f} s later as systemd would): READY {restart.ready:.2f} s and every "
        f"board's game resumed ({restart.boards_resumed}) {restart.resumed:.2f} s after the "
        f"kill; {len(waited)} presses waited for it (press -> move p50 "
        f"{ms(percentile(lags, 0.5) if lags else float('nan'))} ms, longest "
        + (", ".join(f"board {b} ply {p} {t * 1e3:.0f} ms" for t, b, p in waited[:3]) or "-")
        + "), left out of the lags above"
    )


def _alive_cell(f: HallFigures) -> str:
    if not f.alive:
        return "not checked"
    dead = [c.feature.split(" (")[0] for c in f.alive if not c.alive]
    return "alive" if not dead else "DEAD: " + ", ".join(dead)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--hall",
        choices=sorted(HALLS),
        default="pi4",
        help="pi4: 2 x 12 bus boards, 2 speaking, MQTT TLS, 100 viewers, "
        "lichess; zero2w: 12 bus boards, 1 speaking, MQTT (pi4)",
    )
    parser.add_argument(
        "--budgets",
        default="",
        help="comma-separated (default: the hall's: full and its Pi's two "
        "models); full, pi4, pi4-cores, zero2w, zero2w-cores",
    )
    parser.add_argument(
        "--chain",
        type=int,
        default=0,
        help="boards on each bus chain (the hall's: 12): how many a Pi serves in time",
    )
    parser.add_argument("--plies", type=int, default=30, help="plies per game (30)")
    parser.add_argument("--viewers", type=int, default=0, help="viewers (the hall's)")
    parser.add_argument("--mqtt", choices=("plain", "tls"), default="", help="(the hall's)")
    parser.add_argument(
        "--page", default="/?wall=fit", help="the page the viewers show (/?wall=fit: every board)"
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="py-spy the daemon over its games, its stacks into this folder (pip install py-spy)",
    )
    parser.add_argument(
        "--profile-seconds",
        type=float,
        default=0.0,
        help="profile only the games' first seconds (the first moves of every board at once)",
    )
    parser.add_argument(
        "--storm-every",
        type=float,
        default=0.0,
        help="every viewer's feed closed and reopened at once every this many seconds of "
        "the games (a Wi-Fi blip; each asks for every board's state anew)",
    )
    parser.add_argument(
        "--scrapers",
        type=int,
        default=0,
        help="clients polling /state.json and /game.pgn in turn (a broadcast site, a "
        "relay's page), each from an address of its own",
    )
    parser.add_argument(
        "--scrape-every", type=float, default=1.0, help="seconds between a scraper's reads (1)"
    )
    parser.add_argument(
        "--restart-at",
        type=float,
        default=0.0,
        help="kill the daemon (SIGKILL) this many seconds into the games and start it "
        f"again {RESTART_SEC:.0f} s later, as systemd would: its return timed, every move "
        "still exact, every output alive",
    )
    parser.add_argument(
        "--slow-card",
        action="store_true",
        help="every fsync of the daemon takes 20-200 ms (a slow SD card)",
    )
    add_calibration_options(parser)
    parser.add_argument(
        "--zero2w-fraction", type=float, default=0.0, help="pin the Zero 2 W's budget, %% of a core"
    )
    parser.add_argument(
        "--pi4-fraction",
        type=float,
        default=0.0,
        help="pin the Pi 4's budget, %% of a core (a before/after pair at the same budget)",
    )
    add_keep_awake(parser)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="chains of 2 boards, 4 plies, 5 viewers: checks the plumbing",
    )
    args = parser.parse_args(argv)
    shape = HALLS[args.hall]
    changes: dict[str, Any] = {}
    if args.quick:
        changes = {"chains": tuple(2 for _ in shape.chains), "viewers": min(shape.viewers, 5)}
        args.plies, args.calibrate_steps = 4, 5_000
    if args.chain:
        changes["chains"] = tuple(args.chain for _ in shape.chains)
    if args.viewers:
        changes["viewers"] = args.viewers
    if args.mqtt:
        changes["mqtt"] = args.mqtt
    if changes:
        shape = Shape(**{**shape.__dict__, **changes})
    SYNTHESIS[0] = "auto"  # as shipped: the thread for one blind player, a worker for two
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with contextlib.suppress(OSError):
        os.nice(-10)  # the emulators stand in for hardware (see benchmarks.pibudget)
    header(f"a hall in one daemon on a Pi's budget ({args.hall}): {shape.describe()}")
    print(describe_idle(args.keep_awake))
    with kept_awake(args.keep_awake):
        return _measure(args, shape)


def _measure(args: argparse.Namespace, shape: Shape) -> int:
    """The calibration, then the hall at each budget, then the verdict (main's work)."""
    names = args.budgets or shape.budgets
    if names != "full":
        problem = can_use_cgroups()
        if problem:
            print(f"cannot run: {problem}")
            return 2
    compile_sources()
    budgets = calibrated_budgets(
        names,
        args.calibrate_steps,
        args.zero2w_fraction,
        args.pi4_fraction,
        pythons=args.calibration_python,
    )
    slow_card: dict[str, str] = {}
    if args.profile is not None and py_spy() is None:
        print("cannot run: --profile needs py-spy (pip install py-spy)")
        return 2
    with contextlib.ExitStack() as stack:
        if args.slow_card:
            from benchmarks.sdcard import build_shim, shim_environment

            shim_dir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            slow_card = shim_environment(build_shim(shim_dir), shim_dir / "delays.txt")
            print("slow SD card: every fsync of the daemon sleeps 20-200 ms (log-uniform)")
        all_figures = []
        for budget in budgets:
            print(
                f"-- {budget.label()}: {args.plies} plies a board ... (load {load_average()})",
                flush=True,
            )
            options = Options(args.plies, args.page, slow_card, args.profile,
                              args.profile_seconds, args.storm_every, args.scrapers,
                              args.scrape_every, args.restart_at)  # fmt: skip
            all_figures.append(run_hall(shape, budget, options))
            done = all_figures[-1]
            print(
                f"{budget.name} done: {done.exact}/{done.boards} exact, "
                f"{done.elapsed:.0f} s (load {load_average()})",
                flush=True,
            )
        if args.slow_card:
            from benchmarks.sdcard import read_fsyncs

            delays = sorted(f.ms for f in read_fsyncs(shim_dir / "delays.txt"))
            print(
                f"slow SD card: {len(delays)} fsyncs slept, median "
                f"{delays[len(delays) // 2] if delays else 0:.0f} ms"
            )
    met = report(shape, all_figures)
    judged = judged_runs(shape, all_figures)
    print(
        f"\nverdict: {'every target met' if met else 'a target MISSED'} at "
        f"{' and '.join(f.budget.name for f in judged) or '-'}"
    )
    footer()
    dead = any(not f.alive or not all(c.alive for c in f.alive) for f in all_figures)
    wrong = any(f.exact != f.boards for f in all_figures)
    return 1 if dead or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
