"""A mailing's messages built from its letterhead, without a server: the same bytes as the ``email``
package composes (MAIL-10), the package itself where the shortcut would differ, and the unsubscribe
link stored as one ``<URL>`` however long it is."""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from itertools import product

import pytest

from loyalty_api.adapters.campaign_message import Letterhead, as_sent, compose
from loyalty_core.mailings.rules import message_id, with_footer

NOW = datetime(2026, 11, 29, 16, 30, 5, tzinfo=UTC)
SHOPS = ("Bench Bakery", "Bäckerei Ümlaut & Zn", "A shop whose name is long enough to fold " * 3)
SUBJECTS = ("Spring news", "Nieuws ✓", "Eine lange Betreffzeile mit Umlauten äöü, die länger als eine Zeile ist " * 2)
BODIES = (
    "Hello Fan 1, 120 points.",
    "Bonjour Émile,\r\nvotre carte C0DE.\n\n\tTabbed {braces} line\x0b\x0cwith controls",
    "A line longer than seventy-eight bytes goes out quoted-printable or base64: " + "x" * 80,
    "Ünïcödé line longer than seventy-eight bytes in UTF-8 once encoded, so the package encodes it ✓✓✓",
    "ポイントのお知らせ、いつもご利用ありがとうございます。今月のポイントは百二十点です。" * 2,
    "\n".join(
        f"Line {n} of a long letter, long enough to need a soft break somewhere along it: {'y' * 30}" for n in range(12)
    ),
)
ADDRESSES = (
    "fan1@bench.example",
    "first.last+tag@sub.shop-example.nl",
    "jörg@bench.example",
    "odd..dots@bench.example",
)
URLS = (
    "https://loyalty.example/unsubscribe/test-copy",
    "https://loyalty.a-rather-long-public-host.example.com/api/v1/unsubscribe/12.1234567.QYh4mIDPJfNeVSpzaKZEaN3EjhDZvLxFF5f7F7hd97M",
)


@pytest.mark.parametrize(("shop", "subject"), list(product(SHOPS, SUBJECTS)))
def test_the_letterhead_builds_the_bytes_the_email_package_composes(shop: str, subject: str) -> None:
    """MAIL-10: whichever way a message is built, the server receives the same bytes."""
    head = Letterhead(shop_name=shop, sender="news@shop.example", subject=subject)
    for number, (body, to, url) in enumerate(product(BODIES, ADDRESSES, URLS)):
        text = with_footer(body, url)
        made = message_id(7, number, "shop.example")
        letter = head.letter(to=to, text=text, message_id=made, unsubscribe_url=url, now=NOW)
        composed = compose(
            shop_name=shop,
            sender="news@shop.example",
            to=to,
            subject=subject,
            text=text,
            message_id=made,
            unsubscribe_url=url,
            now=NOW,
        )
        assert letter.as_sent() == as_sent(composed), (body, to, url)
        assert (letter.sender, letter.to) == ("news@shop.example", to)
        assert isinstance(letter.data, bytes) is (to in ADDRESSES[:2]), to


def test_the_unsubscribe_link_is_one_unfolded_header_however_long() -> None:
    """MAIL-10: ``List-Unsubscribe: <URL>`` as RFC 8058 asks, never encoded words, though the line
    is longer than 78 characters; a reader of the message finds the link and the one-click header."""
    url = URLS[1]
    head = Letterhead(shop_name="Bench Bakery", sender="news@shop.example", subject="Spring news")
    for to in ("fan1@bench.example", "jörg@bench.example"):
        letter = head.letter(
            to=to, text=with_footer("Hi", url), message_id="<mailing-1-2@shop.example>", unsubscribe_url=url, now=NOW
        )
        raw = letter.as_sent()
        assert f"\r\nList-Unsubscribe: <{url}>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n".encode() in raw
        parsed = message_from_bytes(raw, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        assert (str(parsed["List-Unsubscribe"]), str(parsed["Message-ID"])) == (
            f"<{url}>",
            "<mailing-1-2@shop.example>",
        )
        assert parsed.get_content() == f"Hi\r\n\r\n--\r\nUnsubscribe: {url}\r\n"


def test_an_address_from_elsewhere_falls_back_to_the_email_package() -> None:
    """MAIL-10: a From address the shortcut does not cover (a display name in the setting) is left
    to the package, message by message."""
    head = Letterhead(shop_name="Bench Bakery", sender="Shop News <news@shop.example>", subject="Spring news")
    letter = head.letter(
        to="fan1@bench.example", text="Hi\n", message_id="<mailing-1-2@shop.example>", unsubscribe_url=URLS[0], now=NOW
    )
    assert isinstance(letter.data, EmailMessage)
