"""The code ``dataclasses`` generates, kept compiled: a command's classes are made
without compiling anything.

CPython's ``dataclass`` writes each class's ``__init__`` as Python text and compiles it
(``exec``) at every start. Before READY the daemon makes some 100 dataclasses (its
records, its settings, its events), and compiling their ``__init__`` was 14 ms of its
135 ms to READY on the development machine: with it kept, the start to READY counts
819 -> 753 M instructions (issue 28, ``benchmarks.ready_cost``), on a Pi Zero 2 W
whose READY should come within 5 s. The text depends only on the class's fields, so
its compiled code is kept, as Python keeps a module's bytecode in ``__pycache__``: one
file of the cache directory's ``code/`` (``daemon.files.cachedir``) maps each text to
its code object (``marshal``). The file is named by the interpreter's bytecode magic
number and optimisation level, so another interpreter never reads code it did not
write, and it carries a checksum: a file an SD card damaged (a power cut) is compiled
afresh, never run.

While a command builds (``kept()``, entered by ``daemon.service.gcfreeze.building``)
``dataclasses`` runs a text it ran before from that code, and any other text as it
always does, compiled then and added to the file when the build is over. Nothing else
changes: the code is what ``exec`` would compile from the same text (``dont_inherit``:
as in ``dataclasses``, no ``from __future__`` of the caller applies). A file that
cannot be read counts as empty; where it cannot be written, nothing is kept.

The hook is the one name ``dataclasses`` calls to compile (its module's ``exec``, in
CPython 3.11), set for the build and removed after it. Should a later Python
compile otherwise, its dataclasses are made as before, only without the saving.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import zlib
from collections.abc import Iterator
from types import CodeType
from typing import Any

from daemon.files import cachedir

#: Bumped when what the file holds changes shape; part of its name.
FORMAT = 1

#: The file's first bytes; its checksum follows.
MAGIC = b"DGTC"

#: Texts kept at most: past it a file holds only what the last build used (an
#: upgrade leaves its predecessor's texts behind, and they are never used again).
LIMIT = 2000


def cache_path() -> str | None:
    """The file of this interpreter's compiled texts (None: no cache directory)."""
    directory = cachedir.cache_directory("code")
    if directory is None:
        return None
    magic = importlib.util.MAGIC_NUMBER.hex()
    return os.path.join(directory, f"dataclasses-{FORMAT}-{magic}-O{sys.flags.optimize}.marshal")


class CompiledTexts:
    """Code objects by the text they were compiled from: those read from the file,
    those compiled since (``compiled``), and which were used."""

    def __init__(self, codes: dict[str, CodeType]) -> None:
        self.codes = codes
        self.compiled = 0
        self.reused = 0
        self.used: set[str] = set()

    def code(self, text: str) -> CodeType:
        code = self.codes.get(text)
        if code is None:
            code = self.codes[text] = compile(text, "<string>", "exec", dont_inherit=True)
            self.compiled += 1
        else:
            self.reused += 1
        self.used.add(text)
        return code

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """``exec`` for ``dataclasses``: a text by its kept code, anything else as is."""
        if isinstance(source, str):
            source = self.code(source)
        builtins.exec(source, globals, locals)

    def to_store(self) -> dict[str, CodeType]:
        """What the file should hold: everything known, or what this build used once
        that passes ``LIMIT``."""
        if len(self.codes) <= LIMIT:
            return self.codes
        return {text: code for text, code in self.codes.items() if text in self.used}


def read(path: str | None) -> dict[str, CodeType]:
    """The texts and their code kept in ``path`` (empty when absent, unreadable or
    not as written: a bit changed on the card is never run as code)."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    if data[:4] != MAGIC or int.from_bytes(data[4:8], "little") != zlib.crc32(data[8:]):
        return {}
    try:
        stored = marshal.loads(data[8:])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(stored, dict):
        return {}
    return {
        text: code
        for text, code in stored.items()
        if isinstance(text, str) and isinstance(code, CodeType)
    }


def write(path: str | None, texts: CompiledTexts) -> None:
    """Keeps ``texts`` in ``path`` when the build compiled a text the file lacked: the
    marshalled texts and code after ``MAGIC`` and their CRC-32."""
    if path is None or not texts.compiled:
        return
    data = marshal.dumps(texts.to_store())
    cachedir.replace_file(path, MAGIC + zlib.crc32(data).to_bytes(4, "little") + data)


#: The build in progress (``kept()``), so that a nested one does not hook twice.
_active: CompiledTexts | None = None


@contextlib.contextmanager
def kept() -> Iterator[CompiledTexts]:
    """Within the block, ``dataclasses`` compiles only texts it never compiled here
    before; at its end what it compiled is added to the file."""
    global _active
    if _active is not None:  # a build within a build: the outer one keeps the texts
        yield _active
        return
    path = cache_path()
    texts = _active = CompiledTexts(read(path))
    # A module global of dataclasses, found before the builtin it shadows (no stub has it)
    dataclasses.exec = texts.exec  # type: ignore[attr-defined]
    try:
        yield texts
    finally:
        # Only its own hook (two threads building at once: each leaves the other's).
        if dataclasses.__dict__.get("exec") == texts.exec:
            # the builtin again; as above, a name the stubs do not know
            del dataclasses.exec  # type: ignore[attr-defined]
        if _active is texts:
            _active = None
        write(path, texts)
