#!/bin/sh
# Stands in for aplay in the benchmarks (no sound card here): notes the wall-clock time
# it was started at and the WAV file it was given, in the file named by $1, and plays
# nothing. The daemon starts it exactly as it starts aplay (speech.player).
printf '%s %s\n' "$(date +%s.%N)" "$2" >> "$1"
