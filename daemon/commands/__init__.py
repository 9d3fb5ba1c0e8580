"""One module per ``dgt-bridge`` subcommand.

Each module defines ``register(subparsers)``, which adds its parser and sets
``func`` (taking the parsed namespace, returning the exit code). The CLI finds
the modules itself, so adding a command never touches a shared file.
"""
