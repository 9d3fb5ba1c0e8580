"""Measured targets of dgt-bridge: one script per measure (see ``benchmarks/README.md``).

Run them as modules from the project root, e.g. ``python -m benchmarks.accuracy``.
"""
