"""A job worker of its own for the crash test: runs ``campaign-mails`` once over the database and the
SMTP server named on its command line, so a test can kill it with ``kill -9`` mid-send.

``python -m tests.support.campaign_sender DATABASE_URL SMTP_PORT``"""

from __future__ import annotations

import asyncio
import sys

from loyalty_api.adapters.mail_sender import SmtpMailer
from loyalty_api.jobs.campaign_mails import campaign_mails
from loyalty_api.jobs.context import JobContext
from loyalty_core.clock import SystemClock
from loyalty_core.customers.rules.consent import unsubscribe_key
from loyalty_core.db import make_engine, make_sessionmaker


async def main(database_url: str, port: int) -> None:
    engine = make_engine(database_url)
    context = JobContext(
        sessionmaker=make_sessionmaker(engine),
        clock=SystemClock(),
        mailer=SmtpMailer("127.0.0.1", port),
        mail_from="news@shop.example",
        unsubscribe_key=unsubscribe_key("crash-test-secret-of-32-bytes-or-more"),
        public_url="https://loyalty.example",
    )
    try:
        print("sending", flush=True)
        await campaign_mails(context, budget=600)
    finally:
        await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
