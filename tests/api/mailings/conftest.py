"""The mailings' service: SMTP at a real server started for each test (aiosmtpd), no worker of its
own (the tests run the jobs by name), the unsubscribe links under a public URL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from tests.support.app import ADMIN_TOKEN
from tests.support.mailings import PUBLIC, Client
from tests.support.smtp import Inbox, smtp_server


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as server:
        yield server


@pytest.fixture
async def mail_client(settings: Settings, smtp: tuple[Inbox, int]) -> AsyncIterator[Client]:
    own = msgspec.structs.replace(
        settings,
        admin_token=ADMIN_TOKEN,
        worker="external",
        smtp_host="127.0.0.1",
        smtp_port=smtp[1],
        mail_from="news@shop.example",
        public_url=PUBLIC,
    )
    async with AsyncTestClient(app=create_app(own)) as client:
        yield client
