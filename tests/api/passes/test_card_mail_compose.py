"""The card mail as a message, without a server: locale, parts, QR code, save link and the note
when the pass file could not be attached (PASS-6, PASS-7)."""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage

from loyalty_api.adapters.card_message import compose, qr_png
from loyalty_core.passes.services.ports import BrandingFacts, CardFacts

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SAVE = "https://pay.google.com/gp/v/save/eyJ.test.sig"


def _card(locale: str, holder: str = "Anna <de Vries>") -> CardFacts:
    branding = BrandingFacts("Bakkerij & Zn", "#ffffff", "#1d1d1f", "#636366", None, None)
    return CardFacts(
        vendor_id=1,
        customer_id=2,
        card_code="AB12CD34",
        holder_name=holder,
        balance=120,
        locale=locale,
        branding=branding,
    )


def _round_trip(message: EmailMessage) -> EmailMessage:
    parsed = message_from_bytes(message.as_bytes(), policy=policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def test_dutch_mail_without_pass_says_so_and_keeps_qr_and_link() -> None:
    made = compose(
        _card("nl"),
        to="anna@example.com",
        sender="kaart@shop.example",
        message_id="<card-1@shop.example>",
        save_url=SAVE,
        pkpass=None,
        now=NOW,
    )
    message = _round_trip(made.message)
    assert made.subject == "Je klantenkaart van Bakkerij & Zn"
    assert (message["Subject"], message["Message-ID"], message["To"]) == (
        made.subject,
        "<card-1@shop.example>",
        "anna@example.com",
    )
    assert made.attachments == [{"filename": "qr-AB12CD34.png", "content_type": "image/png"}]
    plain = message.get_body(("plain",))
    html = message.get_body(("html",))
    assert plain is not None
    assert html is not None
    text, markup = plain.get_content(), html.get_content()
    assert "kon nog niet bij deze mail worden gevoegd" in text
    assert SAVE in text
    assert f'href="{SAVE}"' in markup
    assert "Anna &lt;de Vries&gt;" in markup  # the customer's name is escaped in the HTML
    assert "Bakkerij &amp; Zn" in markup
    [qr] = [p for p in message.walk() if p.get_filename() == "qr-AB12CD34.png"]
    assert qr.get_content() == qr_png("AB12CD34")
    assert f"cid:{str(qr['Content-ID']).strip('<>')}" in markup


def test_english_mail_with_pass_attaches_it() -> None:
    made = compose(
        _card("en", holder=""),
        to="a@example.com",
        sender="s@shop.example",
        message_id="<card-2@shop.example>",
        save_url=SAVE,
        pkpass=b"PK\x03\x04pass",
        now=NOW,
    )
    message = _round_trip(made.message)
    assert made.subject == "Your loyalty card from Bakkerij & Zn"
    [pkpass] = [p for p in message.walk() if p.get_filename() == "card-AB12CD34.pkpass"]
    assert pkpass.get_content_type() == "application/vnd.apple.pkpass"
    assert pkpass.get_content() == b"PK\x03\x04pass"
    plain = message.get_body(("plain",))
    assert plain is not None
    assert plain.get_content().startswith("Hello,\n")
    assert "Open the attached card-AB12CD34.pkpass" in plain.get_content()
