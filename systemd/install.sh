#!/usr/bin/env bash
# Install dgt-bridge on Raspberry Pi OS (or any Debian with systemd), idempotently:
#   - espeak-ng and python3-venv (apt)
#   - a virtual environment under /opt/dgt-bridge/venv with dgt-bridge in it
#   - the system user dgt-bridge, in the dialout (serial) and audio groups
#   - the unit /etc/systemd/system/dgt-bridge.service (enabled and started)
#   - the udev rule /etc/udev/rules.d/99-dgt-board.rules (/dev/dgt-board)
#   - the configuration /etc/dgt-bridge/dgt-bridge.yaml (never overwritten: a changed
#     default is put beside it as dgt-bridge.yaml.dist)
# Running it again repairs or upgrades; nothing is done twice.
#
#   sudo systemd/install.sh                 install or upgrade from this source tree
#   sudo systemd/install.sh --uninstall     remove it all, except the recorded games
#                                           (/var/lib/dgt-bridge)
#   systemd/install.sh --dry-run            print what would be done, change nothing
#   DESTDIR=/tmp/root systemd/install.sh --no-apt --no-user --no-venv --no-systemctl
#                                           only the files, under DESTDIR (packaging, tests)
set -euo pipefail

SOURCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DESTDIR="${DESTDIR:-}"
PREFIX="${PREFIX:-/opt/dgt-bridge}"
CONFIG_DIR="/etc/dgt-bridge"
UNIT_DIR="/etc/systemd/system"
UDEV_DIR="/etc/udev/rules.d"
STATE_DIR="/var/lib/dgt-bridge"
SERVICE_USER="dgt-bridge"

action=install
dry_run=0
do_apt=1
do_user=1
do_venv=1
do_systemctl=1

usage() {
    sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

for arg in "$@"; do
    case "$arg" in
        --uninstall) action=uninstall ;;
        --dry-run) dry_run=1 ;;
        --no-apt) do_apt=0 ;;
        --no-user) do_user=0 ;;
        --no-venv) do_venv=0 ;;
        --no-systemctl) do_systemctl=0 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    esac
done

if [ -n "$DESTDIR" ]; then
    # A staging root: system state (apt, users, systemd, udev) is not ours to touch.
    do_apt=0
    do_user=0
    do_systemctl=0
fi

# Run a command, or only show it with --dry-run.
run() {
    if [ "$dry_run" = 1 ]; then
        printf '+ %s\n' "$*"
    else
        "$@"
    fi
}

say() { printf 'dgt-bridge install: %s\n' "$*"; }

if [ "$dry_run" = 0 ] && [ -z "$DESTDIR" ] && [ "$(id -u)" != 0 ]; then
    echo "install.sh: run as root (sudo), or use --dry-run / DESTDIR=..." >&2
    exit 1
fi

install_file() { # mode source destination
    run install -D -m "$1" "$2" "$DESTDIR$3"
}

do_install() {
    if [ "$do_apt" = 1 ]; then
        say "system packages (python3-venv, espeak-ng)"
        run apt-get update -q
        run apt-get install -y -q python3-venv python3-pip espeak-ng alsa-utils
    fi

    if [ "$do_user" = 1 ]; then
        if id "$SERVICE_USER" >/dev/null 2>&1; then
            say "user $SERVICE_USER exists; making sure it is in dialout and audio"
            run usermod -a -G dialout,audio "$SERVICE_USER"
        else
            say "user $SERVICE_USER"
            run useradd --system --home-dir "$STATE_DIR" --no-create-home \
                --shell /usr/sbin/nologin --groups dialout,audio "$SERVICE_USER"
        fi
    fi

    if [ "$do_venv" = 1 ]; then
        say "virtual environment $PREFIX/venv"
        if [ ! -x "$DESTDIR$PREFIX/venv/bin/python" ]; then
            run python3 -m venv "$DESTDIR$PREFIX/venv"
        fi
        run "$DESTDIR$PREFIX/venv/bin/pip" install -q --upgrade "$SOURCE_DIR"
        # The unit runs the daemon with PYTHONOPTIMIZE=2 (python -OO: smaller on a
        # Pi); pip writes only the plain bytecode, and the daemon cannot write any
        # (ProtectSystem=strict), so the -OO bytecode of the venv and of the
        # standard library is written here, once.
        say "bytecode for the unit's PYTHONOPTIMIZE=2 (venv and standard library)"
        local python="$DESTDIR$PREFIX/venv/bin/python" stdlib="/usr/lib/python3"
        if [ -x "$python" ]; then
            stdlib="$("$python" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"
        fi
        run "$python" -OO -m compileall -q -j 0 \
            -x '/(test|tests|idlelib|tkinter|lib2to3|ensurepip)/' \
            "$DESTDIR$PREFIX/venv/lib" "$stdlib" \
            || say "  some files did not compile (they are compiled when imported)"
    fi

    say "documentation $PREFIX/docs"
    install_file 0644 "$SOURCE_DIR/docs/daemon.md" "$PREFIX/docs/daemon.md"

    say "configuration $CONFIG_DIR/dgt-bridge.yaml"
    local config="$DESTDIR$CONFIG_DIR/dgt-bridge.yaml"
    if [ -e "$config" ]; then
        if ! cmp -s "$SOURCE_DIR/config/dgt-bridge.yaml" "$config"; then
            say "  kept your $CONFIG_DIR/dgt-bridge.yaml; the new default is dgt-bridge.yaml.dist"
            install_file 0644 "$SOURCE_DIR/config/dgt-bridge.yaml" "$CONFIG_DIR/dgt-bridge.yaml.dist"
        fi
    else
        install_file 0644 "$SOURCE_DIR/config/dgt-bridge.yaml" "$CONFIG_DIR/dgt-bridge.yaml"
    fi

    say "systemd unit and udev rule"
    install_file 0644 "$SOURCE_DIR/systemd/dgt-bridge.service" "$UNIT_DIR/dgt-bridge.service"
    install_file 0644 "$SOURCE_DIR/systemd/99-dgt-board.rules" "$UDEV_DIR/99-dgt-board.rules"

    if [ "$do_systemctl" = 1 ]; then
        run udevadm control --reload-rules
        run udevadm trigger --subsystem-match=tty --attr-match=idVendor=045b
        run systemctl daemon-reload
        run systemctl enable dgt-bridge.service
        run systemctl restart dgt-bridge.service
        say "done: journalctl -u dgt-bridge -f shows the moves"
    else
        say "done (files only)"
    fi
}

do_uninstall() {
    if [ "$do_systemctl" = 1 ]; then
        run systemctl disable --now dgt-bridge.service || true
    fi
    say "removing the unit, the udev rule, the configuration and $PREFIX"
    run rm -f "$DESTDIR$UNIT_DIR/dgt-bridge.service" "$DESTDIR$UDEV_DIR/99-dgt-board.rules"
    run rm -rf "$DESTDIR$CONFIG_DIR" "$DESTDIR$PREFIX"
    if [ "$do_systemctl" = 1 ]; then
        run systemctl daemon-reload
        run udevadm control --reload-rules
    fi
    if [ "$do_user" = 1 ] && id "$SERVICE_USER" >/dev/null 2>&1; then
        run userdel "$SERVICE_USER"  # without -r: its home is the games' directory
    fi
    say "kept the recorded games in $STATE_DIR (remove them yourself if you wish)"
}

if [ "$action" = install ]; then
    do_install
else
    do_uninstall
fi
