"""A self-signed certificate for one host on 127.0.0.1, a server's TLS context serving it, a client
context trusting it, and an HTTPS server in a thread: what the receivers standing in for a webhook
target (``tls_receiver``), platform_a's push service (``h2_receiver``, and ``bench._h2_sink`` for the
benchmarks) and platform_b's object API (``object_api``) share."""

from __future__ import annotations

import datetime
import ssl
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def certificate(host: str, valid_for: datetime.timedelta = datetime.timedelta(hours=1)) -> tuple[bytes, bytes]:
    """(certificate, key), PEM: a CA certificate naming ``host``, valid for the next hour (or
    ``valid_for``: a benchmark's stand-in outlives a test's)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + valid_for)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def serving(cert: bytes, key: bytes) -> ssl.SSLContext:
    """A server's TLS context presenting ``cert`` (``ssl`` loads a chain from files only)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as folder:
        cert_file, key_file = Path(folder) / "cert.pem", Path(folder) / "key.pem"
        cert_file.write_bytes(cert)
        key_file.write_bytes(key)
        context.load_cert_chain(cert_file, key_file)
    return context


def trusting(cert: bytes) -> ssl.SSLContext:
    """A client's TLS context that trusts ``cert``."""
    return ssl.create_default_context(cadata=cert.decode())


@contextmanager
def https_server(handler: type[BaseHTTPRequestHandler], cert: bytes, key: bytes) -> Iterator[int]:
    """``handler`` served over TLS with ``cert`` on 127.0.0.1, in a thread, until the block ends:
    the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.socket = serving(cert, key).wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
