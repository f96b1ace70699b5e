"""A local stand-in for platform_a's push service: HTTP/2 over TLS on 127.0.0.1 that answers every
request 200 with no body and counts them; it asks for a client certificate issued under the root
given (the shop's pass identity, as the push service does).

``python -m bench._h2_sink FOLDER HOST``: reads ``FOLDER/client-root.pem``, writes its own
certificate (for ``HOST``, self-signed by ``tests.support.self_signed``, the tests' stand-ins' one
maker) to ``FOLDER/sink.pem`` and then its port to ``FOLDER/port``;
on SIGTERM writes the requests answered to ``FOLDER/answered`` and exits.
"""

from __future__ import annotations

import asyncio
import datetime
import signal
import ssl
import sys
from pathlib import Path

from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import ConnectionTerminated, DataReceived, StreamEnded

from tests.support.self_signed import certificate, serving


async def serve(folder: Path, host: str) -> None:
    cert, key = certificate(host, valid_for=datetime.timedelta(hours=2))
    (folder / "sink.pem").write_bytes(cert)
    context = serving(cert, key)
    context.set_alpn_protocols(["h2"])
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=(folder / "client-root.pem").read_text())
    answered = 0

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal answered
        conn = H2Connection(H2Configuration(client_side=False, header_encoding="utf-8"))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        try:
            while data := await reader.read(65_535):
                for event in conn.receive_data(data):
                    if isinstance(event, DataReceived):
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, StreamEnded):
                        answered += 1
                        conn.send_headers(event.stream_id, [(":status", "200")], end_stream=True)
                    elif isinstance(event, ConnectionTerminated):
                        return
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            return
        finally:
            writer.close()

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    server = await asyncio.start_server(connection, "127.0.0.1", 0, ssl=context)
    (folder / "port").write_text(str(server.sockets[0].getsockname()[1]))
    await stop.wait()
    server.close()
    (folder / "answered").write_text(str(answered))


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]), sys.argv[2]))
