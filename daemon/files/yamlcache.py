"""YAML files that parsed before, read back as JSON: a command starts without PyYAML.

Every command reads the configuration and a vocabulary at its start, and importing
PyYAML alone is about 96 M instructions (~19 ms on the development machine, several
times that on a Pi), more than the whole game a ``replay`` plays
(benchmarks/cli_startup.py). So what a YAML file parsed to is kept as a JSON file in
the cache directory, named by the file's content (its length and two checksums)
and by the code that parsed it (``_code_stamp``), and the next start reads that
instead. An edited file has other content, so it is parsed afresh; a file is kept
only once it loaded without a mistake, so every message about a mistake still comes
from the YAML parser, with its line.

The files are in the cache directory's ``parsed/`` (``daemon.files.cachedir``). A file
of the cache that cannot be read as expected counts as absent.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from typing import Any

from daemon.files import cachedir

#: Bumped when what is stored changes shape; part of every name.
FORMAT = 1

#: Files kept per kind (a configuration edited often leaves older versions behind).
KEEP = 16


def cache_directory() -> str | None:
    """Where parsed files are kept (None: no home to put them in)."""
    return cachedir.cache_directory("parsed")


#: The modules whose code shapes what is stored: the configuration's tree and the
#: scalars its binder constructs (daemon/config/), the vocabulary's reading, and this file.
_SHAPING = (
    os.path.join("config", "nodes.py"),
    os.path.join("config", "binder.py"),
    os.path.join("speech", "vocabulary.py"),
    os.path.join("files", "yamlcache.py"),
)
_stamp: str | None = None


def shaping_modules() -> list[str]:
    """The paths of the modules that shape the stored trees (``_SHAPING``)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # daemon/
    return [os.path.join(here, relative) for relative in _SHAPING]


def _code_stamp() -> str:
    """Which code wrote a cache file: the package's version and the size and
    modification time of the modules that shape the stored trees. A file kept by
    other code (an upgrade, an edited checkout) is then simply not found, so no
    one has to remember to bump ``FORMAT``; a few stat calls, once per process."""
    global _stamp
    if _stamp is None:
        from daemon import __version__

        parts = [__version__]
        for path in shaping_modules():
            try:
                info = os.stat(path)
                parts.append(f"{info.st_size}:{info.st_mtime_ns}")
            except OSError:
                parts.append("?")
        _stamp = f"{zlib.crc32('/'.join(parts).encode()):08x}"
    return _stamp


def _name(kind: str, text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    checksums = f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
    return f"{kind}-{FORMAT}-{_code_stamp()}-{len(data)}-{checksums}.json"


def read(kind: str, text: str) -> Any | None:
    """What ``text`` parsed to when it was kept (``write``), or None."""
    directory = cache_directory()
    if directory is None:
        return None
    try:
        with open(os.path.join(directory, _name(kind, text)), encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("format") != FORMAT or "data" not in stored:
        return None
    return stored["data"]


def write(kind: str, text: str, data: Any) -> None:
    """Keep what ``text`` parsed to, if JSON holds it exactly (else nothing)."""
    directory = cache_directory()
    if directory is None:
        return
    try:
        encoded = json.dumps({"format": FORMAT, "data": data}, ensure_ascii=False)
        if json.loads(encoded)["data"] != data:  # e.g. a number as a mapping's key
            return
    except (TypeError, ValueError):  # a date, a set: YAML has types JSON has not
        return
    if cachedir.replace_file(os.path.join(directory, _name(kind, text)), encoded.encode()):
        _prune(directory, kind)


def _prune(directory: str, kind: str) -> None:
    """The ``KEEP`` newest files of a kind stay, older ones go."""
    prefix = f"{kind}-"
    entries = [e for e in os.scandir(directory) if e.name.startswith(prefix)]
    if len(entries) <= KEEP:
        return
    entries.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
    for entry in entries[KEEP:]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
