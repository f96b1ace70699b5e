"""An HTTP/2 server over TLS on 127.0.0.1, in the test's own event loop, standing in for platform_a's
push service: it asks for a client certificate issued under a given root, answers each request with
the next scripted status (200 when none is left) and keeps what it received."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import ConnectionTerminated, DataReceived, RequestReceived, StreamEnded

from tests.support.self_signed import certificate, serving, trusting


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    client_subject: str
    connection: int


@dataclass
class Receiver:
    port: int
    server_pem: bytes
    statuses: list[tuple[int, bytes]] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    connections: int = 0

    def trusting(self) -> ssl.SSLContext:
        return trusting(self.server_pem)


def _subject(peer: Any) -> str:
    if not peer:
        return ""
    return ",".join(f"{k}={v}" for rdn in peer.get("subject", ()) for k, v in rdn)


@asynccontextmanager
async def h2_receiver(host: str, client_root_pem: bytes) -> AsyncIterator[Receiver]:
    cert, key = certificate(host)
    context = serving(cert, key)
    context.set_alpn_protocols(["h2"])
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_root_pem.decode())
    receiver = Receiver(port=0, server_pem=cert)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        receiver.connections += 1
        number = receiver.connections
        subject = _subject(writer.get_extra_info("peercert"))
        conn = H2Connection(H2Configuration(client_side=False, header_encoding="utf-8"))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        streams: dict[int, tuple[dict[str, str], bytearray]] = {}
        try:
            while data := await reader.read(65_535):
                for event in conn.receive_data(data):
                    if isinstance(event, RequestReceived):
                        streams[event.stream_id] = ({str(k): str(v) for k, v in event.headers}, bytearray())
                    elif isinstance(event, DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, StreamEnded):
                        headers, body = streams.pop(event.stream_id)
                        receiver.received.append(Received(headers, bytes(body), subject, number))
                        status, answer = receiver.statuses.pop(0) if receiver.statuses else (200, b"")
                        conn.send_headers(event.stream_id, [(":status", str(status))], end_stream=not answer)
                        if answer:
                            conn.send_data(event.stream_id, answer, end_stream=True)
                    elif isinstance(event, ConnectionTerminated):
                        return
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            return
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    receiver.port = server.sockets[0].getsockname()[1]
    try:
        yield receiver
    finally:
        server.close()
        await server.wait_closed()
