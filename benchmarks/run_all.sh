#!/bin/sh
# Runs the benchmarks with their full sizes, one after the other (never together: they
# would measure each other), keeping each output in benchmarks/results/<name>.txt,
# which RESULTS.md quotes. Names on the command line pick some: run_all.sh core fanout
set -u
cd "$(dirname "$0")/.." || exit 1
mkdir -p benchmarks/results
names="${*:-core fanout latency footprint cli_startup hall accuracy faults}"
for name in $names; do
    python -m "benchmarks.$name" > "benchmarks/results/$name.txt" 2>&1
    echo "$name: exit $? ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
done
