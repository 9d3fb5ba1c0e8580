"""One module per ``dgt-bridge`` subcommand.

Each module defines ``register(subparsers)``, which adds its parser and sets
``func`` (taking the parsed namespace, returning the exit code). The CLI finds
the modules itself, so a new module is a new command.

``COMMANDS`` gives each command's one-line help, so that ``dgt-bridge --help``
imports none of them (a test checks it says what each module's own parser says;
a module missing here still works, it only costs its import on every ``--help``).
A command module imports at its top only what building its parser needs; what
the command needs to run, it imports when it runs.
"""

COMMANDS: dict[str, str] = {
    "check-config": "validate a configuration file and print the result",
    "demo": "an emulated DGT board plays a real game; the daemon reads, speaks and shows it",
    "devices": "list DGT boards, USB clocks and serial ports that are plugged in",
    "emulate": "run a virtual DGT board on a pseudo-terminal (for demos and tests)",
    "pairings": "name every board's players and the round from a pairings file (TRF, CSV)",
    "record": "record what a DGT board reports into a sensor log (JSON Lines)",
    "relay": "serve a round's boards from an MQTT broker (grid page, combined live PGN)",
    "replay": "run a sensor log through the rules core and print the event feed",
    "run": "run the daemon: read the board, decide moves, speak, broadcast, journal",
    "say": "speak the answer to a request (last move, clocks, position...)",
}
