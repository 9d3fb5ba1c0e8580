"""Where the daemon keeps what it can make again, and how a kept file is written.

The parsed configuration (``yamlcache``) and the compiled code of the dataclasses
(``codecache``) live there. It is systemd's ``$CACHE_DIRECTORY``
(``CacheDirectory=``), else ``$XDG_CACHE_HOME/dgt-bridge``, else
``~/.cache/dgt-bridge``. Where it cannot be written nothing is kept and nothing is
said: it is only a cache.
"""

from __future__ import annotations

import contextlib
import glob
import os


def cache_directory(part: str) -> str | None:
    """The directory ``part`` of the cache (None: no home to put it in)."""
    systemd = os.environ.get("CACHE_DIRECTORY")
    if systemd:
        return os.path.join(systemd.split(":")[0], part)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # "~" unresolved (no HOME) or a relative setting
        return None
    return os.path.join(base, "dgt-bridge", part)


def replace_file(path: str, data: bytes) -> bool:
    """Writes ``data`` to ``path`` whole or not at all (a temporary file, renamed over
    it), so that a reader, another process's at the same moment included, sees the old
    file or the new one. False, and nothing left behind, where it cannot be written."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    _remove_orphans(path)
    return True


def _remove_orphans(path: str) -> None:
    """The temporary files of ``path`` whose writer is gone: a daemon killed while it
    wrote (SIGKILL, a power cut) left its own behind, for good. A live writer's stays."""
    for orphan in glob.glob(f"{glob.escape(path)}.*.tmp"):
        pid = orphan[len(path) + 1 : -len(".tmp")]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                os.unlink(orphan)
        except OSError:  # alive, another user's (EPERM): not ours to judge
            continue
