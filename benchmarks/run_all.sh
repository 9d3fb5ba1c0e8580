#!/bin/sh
# Runs the benchmarks with their full sizes, one after the other (never together: they
# would measure each other), keeping each output in benchmarks/results/<name>.txt,
# which RESULTS.md quotes. Names on the command line pick some: run_all.sh core fanout
# pibudget runs the daemon at full speed and in CPU quotas worth a Pi 4 and a Pi Zero 2 W
# core (it needs a writable cgroup cpu controller, i.e. root), with MQTT plain and over
# TLS; pihall is the issue-28 hall on one Pi 4 (two bus chains of 12, two blind
# players, MQTT over TLS, lichess, 100 viewers), pihall-zero2w the Zero 2 W's (12 bus
# boards, one blind player, MQTT), pihall-zero2w-slowcard the same with a slow SD card
# (both need root too), pihall-storm the Pi 4 hall with every viewer's feed reopened at
# once every 15 s (a Wi-Fi blip), pihall-scrapers the Pi 4 hall read by 20 scrapers a
# second beside its viewers (/state.json and /game.pgn in turn); pihall-zero2w-restart the
# Zero 2 W's hall killed 25 s into its games and started again as systemd would, and
# restart_moments one game's daemon restarted at 25 moments of a move; recovery_cost the log walk that finds the moves made while a board was out of reach; sdcard is one board and a 12-board chain with a slow SD card;
# growth is a tournament day; memory_parts says where the daemon's memory goes, part by
# part; phrases_back_to_back counts pyttsx3's phrases without samples; ready_cost counts
# the daemon's start to READY in instructions (valgrind), python-chess's and asyncio's
# imports beside it. KEEP_AWAKE=1 runs the budget benchmarks (pibudget, idle_wakes and
# the pihall family) with --keep-awake, into results/<name>-awake.txt: this machine's
# CPUs spinning at the lowest priority instead of halting when idle, as a Pi's core
# wakes (benchmarks/keepawake.py); the others run as before.
set -u
cd "$(dirname "$0")/.." || exit 1
mkdir -p benchmarks/results
names="${*:-core fanout latency footprint mqtt_clients cli_startup ready_cost hall bus_order bus_pace pibudget idle_wakes pihall pihall-storm pihall-scrapers pihall-zero2w pihall-zero2w-restart restart_moments recovery_cost sdcard pihall-zero2w-slowcard growth memory_parts phrases_back_to_back accuracy faults}"
for name in $names; do
    case "$name" in
        pihall-zero2w) command="benchmarks.pihall --hall zero2w" ;;
        pihall-zero2w-slowcard) command="benchmarks.pihall --hall zero2w --slow-card" ;;
        pihall-zero2w-restart) command="benchmarks.pihall --hall zero2w --budgets full,zero2w-cores,zero2w --restart-at 25" ;;
        pihall-storm) command="benchmarks.pihall --hall pi4 --storm-every 15" ;;
        pihall-scrapers) command="benchmarks.pihall --hall pi4 --scrapers 20" ;;
        *) command="benchmarks.$name" ;;
    esac
    out="benchmarks/results/$name.txt"
    case "$name" in
        pibudget|idle_wakes|pihall*)
            if [ "${KEEP_AWAKE:-0}" = 1 ]; then
                command="$command --keep-awake"
                out="benchmarks/results/$name-awake.txt"
            fi ;;
    esac
    # shellcheck disable=SC2086  # the command's words are meant to split
    python -m $command > "$out" 2>&1
    echo "$name: exit $? ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
done
