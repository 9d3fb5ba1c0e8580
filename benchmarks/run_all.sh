#!/bin/sh
# Runs the benchmarks with their full sizes, one after the other (never together: they
# would measure each other), keeping each output in benchmarks/results/<name>.txt,
# which RESULTS.md quotes. Names on the command line pick some: run_all.sh core fanout
# pibudget runs the daemon at full speed and in CPU quotas worth a Pi 4 and a Pi Zero 2 W
# core (it needs a writable cgroup cpu controller, i.e. root); growth is a tournament day;
# memory_parts says where the daemon's memory goes, part by part; phrases_back_to_back
# counts pyttsx3's phrases without samples.
set -u
cd "$(dirname "$0")/.." || exit 1
mkdir -p benchmarks/results
names="${*:-core fanout latency footprint cli_startup hall bus_order pibudget growth memory_parts phrases_back_to_back accuracy faults}"
for name in $names; do
    python -m "benchmarks.$name" > "benchmarks/results/$name.txt" 2>&1
    echo "$name: exit $? ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
done
