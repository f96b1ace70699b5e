"""The card mail itself: an HTML and a text part in the customer's locale (``nl`` or ``en``), the
card's QR code as an inline PNG (``segno``), the platform_b save button, and the signed ``.pkpass``
attached when the shop can sign one (PASS-6, PASS-7).

Pure: it takes the values and returns the message; reading rows and sending are the job's.
"""

from __future__ import annotations

import html
import io
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import segno

from loyalty_core.passes.services.ports import CardFacts

PKPASS_TYPE = ("application", "vnd.apple.pkpass")

_TEXT = {
    "en": {
        "subject": "Your loyalty card from {shop}",
        "greeting": "Hello {name},",
        "greeting_anonymous": "Hello,",
        "intro": "Here is your loyalty card from {shop}. Show the QR code at the till to save and spend points.",
        "card": "Card number",
        "balance": "Points",
        "attached": "Open the attached card-{code}.pkpass on your phone to add the card to Apple Wallet.",
        "missing": (
            "The Apple Wallet file could not be attached to this mail yet; "
            "ask the shop to send the card again later, or use the button below."
        ),
        "save": "Add to Google Wallet",
    },
    "nl": {
        "subject": "Je klantenkaart van {shop}",
        "greeting": "Hallo {name},",
        "greeting_anonymous": "Hallo,",
        "intro": (
            "Hier is je klantenkaart van {shop}. Laat de QR-code aan de kassa zien om punten te sparen en te besteden."
        ),
        "card": "Kaartnummer",
        "balance": "Punten",
        "attached": (
            "Open het bijgevoegde card-{code}.pkpass op je telefoon om de kaart aan Apple Wallet toe te voegen."
        ),
        "missing": (
            "Het Apple Wallet-bestand kon nog niet bij deze mail worden gevoegd; "
            "vraag de winkel de kaart later opnieuw te sturen, of gebruik de knop hieronder."
        ),
        "save": "Toevoegen aan Google Wallet",
    },
}


@dataclass(frozen=True, slots=True)
class Composed:
    message: EmailMessage
    subject: str
    attachments: list[dict[str, str]]
    """``{filename, content_type}`` of every part with a file name, as the outbox lists them."""


def qr_png(code: str) -> bytes:
    """The card code as a QR image a till's scanner reads from a phone screen."""
    buffer = io.BytesIO()
    segno.make(code, error="m", micro=False).save(buffer, kind="png", scale=8, border=4)
    return buffer.getvalue()


def compose(
    card: CardFacts,
    *,
    to: str,
    sender: str,
    message_id: str,
    save_url: str,
    pkpass: bytes | None,
    now: datetime,
) -> Composed:
    words = _TEXT["nl" if card.locale == "nl" else "en"]
    shop = card.branding.shop_name
    subject = words["subject"].format(shop=shop)
    greeting = words["greeting"].format(name=card.holder_name) if card.holder_name else words["greeting_anonymous"]
    wallet_line = words["attached"].format(code=card.card_code) if pkpass is not None else words["missing"]
    lines = [
        greeting,
        "",
        words["intro"].format(shop=shop),
        "",
        f"{words['card']}: {card.card_code}",
        f"{words['balance']}: {card.balance}",
        "",
        wallet_line,
        "",
        f"{words['save']}: {save_url}",
        "",
    ]

    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = sender
    message["To"] = to
    message["Message-ID"] = message_id
    message["Date"] = format_datetime(now)
    message.set_content("\n".join(lines))

    qr_name = f"qr-{card.card_code}.png"
    qr_cid = make_msgid(idstring="qr", domain=message_id.rsplit("@", 1)[-1].rstrip(">"))
    message.add_alternative(
        _html(words, shop, greeting, wallet_line, card, save_url, qr_cid[1:-1]),
        subtype="html",
    )
    html_part = message.get_payload()[1]  # type: ignore[index]
    assert isinstance(html_part, EmailMessage)  # add_alternative made it one
    html_part.add_related(
        qr_png(card.card_code), maintype="image", subtype="png", cid=qr_cid, filename=qr_name, disposition="inline"
    )
    attachments = [{"filename": qr_name, "content_type": "image/png"}]
    if pkpass is not None:
        pass_name = f"card-{card.card_code}.pkpass"
        message.add_attachment(pkpass, maintype=PKPASS_TYPE[0], subtype=PKPASS_TYPE[1], filename=pass_name)
        attachments.append({"filename": pass_name, "content_type": "/".join(PKPASS_TYPE)})
    return Composed(message=message, subject=subject, attachments=attachments)


def _html(
    words: dict[str, str], shop: str, greeting: str, wallet_line: str, card: CardFacts, save_url: str, cid: str
) -> str:
    e = html.escape
    brand = card.branding
    return f"""<!DOCTYPE html>
<html lang="{"nl" if card.locale == "nl" else "en"}">
<head><meta charset="utf-8"><title>{e(words["subject"].format(shop=shop))}</title></head>
<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;background:#f4f4f5;color:#1d1d1f">
<table role="presentation" width="100%" style="max-width:480px;margin:0 auto;background:{e(brand.background)};
 color:{e(brand.foreground)};border-radius:12px;padding:24px">
<tr><td>
<h1 style="font-size:20px;margin:0 0 16px">{e(shop)}</h1>
<p>{e(greeting)}</p>
<p>{e(words["intro"].format(shop=shop))}</p>
<p style="text-align:center"><img src="cid:{e(cid)}" width="232" height="232" alt="{e(card.card_code)}"></p>
<p style="text-align:center;font-size:18px;letter-spacing:2px">
<span style="color:{e(brand.label)}">{e(words["card"])}</span><br><strong>{e(card.card_code)}</strong></p>
<p style="text-align:center"><span style="color:{e(brand.label)}">{e(words["balance"])}</span>
<strong>{card.balance}</strong></p>
<p>{e(wallet_line)}</p>
<p style="text-align:center"><a href="{e(save_url)}" style="display:inline-block;padding:12px 20px;
 background:#1d1d1f;color:#ffffff;border-radius:24px;text-decoration:none">{e(words["save"])}</a></p>
</td></tr>
</table>
</body>
</html>
"""
