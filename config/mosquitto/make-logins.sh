#!/bin/sh
# Give every board of a hall its own broker login, and write the ACL for them.
#   sudo sh make-logins.sh club-open 1 24 | sudo tee /etc/mosquitto/dgt-bridge/acl >/dev/null
# makes (or adds to) /etc/mosquitto/dgt-bridge/passwords the logins relay and
# board-1 .. board-24, each with a random password printed to stderr (give each
# board's Pi its own: broadcast.mqtt.username board-N, password ...), and prints
# the ACL: the relay reads the tournament, board N writes only its own topics.
# A daemon of several boards (a hall Pi) sets username "board-{board}" (each
# board its own login and connection) and one password for its boards: set it
# with SAME_PASSWORD=... sh make-logins.sh club-open 1 12 for that Pi's boards.
# A login is on its Pi: each board also signs what it sends with its own key
# (dgt-bridge relay --hall-key-file hall.key --tournament club-open --print-board-key N;
# docs/broadcast.md, "Every board its own key").
# A board writes its four topics (events, state, pgn, status) and nothing else;
# with ROUNDS="1 2 3" only in those rounds (an evening's), so one login can keep
# at most 4 retained messages a round on the broker; without it, in any round.
set -eu
TOURNAMENT=${1:?tournament topic level (broadcast.mqtt.tournament)}
FIRST=${2:?first board}
LAST=${3:?last board}
PASSWORDS=${PASSWORDS:-/etc/mosquitto/dgt-bridge/passwords}
new_password() { head -c 18 /dev/urandom | base64 | tr -d '/+='; }
add() {
    pw=${SAME_PASSWORD:-$(new_password)}
    if [ -f "$PASSWORDS" ]; then mosquitto_passwd -b "$PASSWORDS" "$1" "$pw"
    else mosquitto_passwd -c -b "$PASSWORDS" "$1" "$pw"; fi
    echo "$1 $pw" >&2
}
add relay
echo "# written by make-logins.sh $TOURNAMENT $FIRST $LAST"
echo "user relay"
echo "topic read dgt-bridge/$TOURNAMENT/#"
board=$FIRST
while [ "$board" -le "$LAST" ]; do
    add "board-$board"
    echo
    echo "user board-$board"
    for round in ${ROUNDS:-+}; do
        for leaf in events state pgn status; do
            echo "topic write dgt-bridge/$TOURNAMENT/$round/$board/$leaf"
        done
    done
    board=$((board + 1))
done
# mosquitto (the user the broker runs as) reads the passwords; nobody else
chown root:mosquitto "$PASSWORDS" 2>/dev/null || true
chmod 640 "$PASSWORDS"
# and the broker's key beside them: openssl makes it for root alone (0600), and
# Mosquitto, once it is the mosquitto user, refuses to start without it
KEY="$(dirname "$PASSWORDS")/broker.key"
if [ -f "$KEY" ]; then
    chown root:mosquitto "$KEY" 2>/dev/null || true
    chmod 640 "$KEY"
fi
