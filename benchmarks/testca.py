"""A throw-away certificate authority for the benchmarks' TLS brokers (made with
``openssl``): ``ca.crt``, a broker certificate for 127.0.0.1 and a client
certificate, all EC P-256, valid two days. Never a real hall's keys."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def has_openssl() -> bool:
    return shutil.which("openssl") is not None


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_test_ca(directory: Path) -> None:
    """``ca.crt``/``ca.key``, ``broker.crt``/``broker.key`` (for 127.0.0.1 and
    localhost) and ``client.crt``/``client.key`` in ``directory``."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=benchmark hall CA", cwd=directory)  # fmt: skip
    for name, extension in (("broker", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
                            ("client", "extendedKeyUsage=clientAuth")):  # fmt: skip
        (directory / f"{name}.ext").write_text(extension + "\n")
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={name}", cwd=directory)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
                 "-extfile", f"{name}.ext", cwd=directory)  # fmt: skip
