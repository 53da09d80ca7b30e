"""Throw-away X.509 certificates for TLS tests, made with the ``openssl`` command line.

:func:`make_certificates` writes a CA, a server certificate for ``127.0.0.1`` /
``localhost`` and a client certificate, all signed by that CA (P-256 keys, valid one day).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Certificates", "make_certificates"]


@dataclass(frozen=True)
class Certificates:
    """PEM files: the CA, the server's pair and a client's pair."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _openssl(*args: str | Path, cwd: Path) -> None:
    binary = shutil.which("openssl")
    if binary is None:
        raise RuntimeError("the openssl command line is needed to make test certificates")
    subprocess.run([binary, *map(str, args)], cwd=cwd, check=True, capture_output=True, timeout=30)


_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")


def _leaf(directory: Path, name: str, subject: str, extensions: str) -> tuple[Path, Path]:
    """A key and a certificate signed by ``ca.pem`` with the given v3 ``extensions``."""
    key, csr, cert = (directory / f"{name}.{ext}" for ext in ("key", "csr", "pem"))
    ext_file = directory / f"{name}.ext"
    ext_file.write_text(extensions)
    _openssl("req", *_KEY, "-keyout", key, "-out", csr, "-subj", subject, cwd=directory)
    _openssl(
        "x509", "-req", "-in", csr, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "1", "-sha256", "-extfile", ext_file, "-out", cert,
        cwd=directory,
    )  # fmt: skip
    return cert, key


def make_certificates(directory: Path) -> Certificates:
    """A fresh CA and server/client certificates in ``directory`` (created if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req", "-x509", *_KEY, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
        "-subj", "/CN=dominos-test-ca",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )  # fmt: skip
    common = (
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
    )
    server_cert, server_key = _leaf(
        directory,
        "server",
        "/CN=127.0.0.1",
        common + "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    client_cert, client_key = _leaf(
        directory, "client", "/CN=dominos-test-client", common + "extendedKeyUsage=clientAuth\n"
    )
    return Certificates(directory / "ca.pem", server_cert, server_key, client_cert, client_key)
