"""CLIENT-7: the generated models name every field in snake_case; a camelCase wire name of the
document (``marketingConsent``) is a snake_case attribute (``marketing_consent``) that msgspec reads
and writes under its wire name, so the JSON is the document's both ways."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest

from loyalty_client import models
from loyalty_client_gen.generate import DOCUMENT
from loyalty_client_gen.schemas import Types, class_name, struct_of
from tests.support.scripted_service import Scripted, data

CUSTOMER = {
    "id": 3,
    "first_name": "Ada",
    "last_name": None,
    "email": "ada@example.com",
    "phone": None,
    "date_of_birth": None,
    "customer_since": "2026-11-26",
    "external_id": None,
    "locale": "nl",
    "status": "active",
    "marketingConsent": True,
    "marketingConsentStatementVersion": "nb-2026-1",
    "loyalty_card_code": "CARD0001",
    "identifiers": [],
    "is_deactivated": False,
    "balance": 40,
    "created_at": "2026-11-26T10:00:00Z",
    "updated_at": "2026-11-26T10:00:00Z",
    "tier": None,
    "referral_code": None,
    "referred_by": None,
}


def structs() -> dict[str, type[msgspec.Struct]]:
    return {
        name: kind
        for name in models.__all__
        if isinstance(kind := getattr(models, name), type) and issubclass(kind, msgspec.Struct)
    }


def test_every_attribute_is_snake_case_and_every_wire_name_the_documents() -> None:
    """CLIENT-7: each struct of a schema has the schema's properties as wire names, in order, and
    attributes of lower-case words; only the camelCase ones differ from their wire names."""
    schemas = json.loads(DOCUMENT.read_text(encoding="utf-8"))["components"]["schemas"]
    by_class = {class_name(name): schema for name, schema in schemas.items()}
    renamed = {}
    unchecked = set()
    for name, kind in structs().items():
        schema = by_class.get(name)
        if schema is None or "properties" not in schema:
            unchecked.add(name)
            continue
        fields = msgspec.structs.fields(kind)
        assert [f.encode_name for f in fields] == list(schema["properties"]), name
        for f in fields:
            assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", f.name), (name, f.name)
            if f.name != f.encode_name:
                renamed[f"{name}.{f.name}"] = f.encode_name
    assert unchecked == {"Page"}  # the generic page, which the document spells out per item
    assert renamed == {
        "Customer.marketing_consent": "marketingConsent",
        "Customer.marketing_consent_statement_version": "marketingConsentStatementVersion",
    }


def test_a_customer_reads_and_writes_its_camel_case_wire_names() -> None:
    """CLIENT-7"""
    customer = msgspec.json.decode(json.dumps(CUSTOMER), type=models.Customer)
    assert (customer.marketing_consent, customer.marketing_consent_statement_version) == (True, "nb-2026-1")
    assert not hasattr(customer, "marketingConsent")
    written = json.loads(msgspec.json.encode(customer))
    assert written == {**CUSTOMER, "merged_into_id": None}
    assert "marketing_consent" not in written


def test_a_customer_answer_is_read_into_the_snake_case_attributes(service: Scripted) -> None:
    """CLIENT-7: through the client, as a till reads it."""
    service.queue(data({**CUSTOMER, "marketingConsent": False, "marketingConsentStatementVersion": None}))
    with service.client() as loyalty:
        customer = loyalty.lookup_customer(identifier="CARD0001")
    assert (customer.marketing_consent, customer.marketing_consent_statement_version) == (False, None)


def test_a_request_sends_a_camel_case_field_under_its_wire_name() -> None:
    """CLIENT-7: the generator writes the wire name for a request's field as well, with its UNSET default."""
    schema = {"properties": {"note": {"type": "string"}, "sendReceipt": {"type": "boolean"}}, "required": ["note"]}
    struct = struct_of("Note", schema, Types({}), request=True)
    assert struct.fields == [
        "note: str",
        'send_receipt: bool | msgspec.UnsetType = msgspec.field(default=msgspec.UNSET, name="sendReceipt")',
    ]
    namespace: dict[str, Any] = {"msgspec": msgspec}
    exec(f"from __future__ import annotations\n{struct.source()}", namespace)
    made = namespace["Note"]
    assert msgspec.json.encode(made(note="x", send_receipt=True)) == b'{"note":"x","sendReceipt":true}'
    assert msgspec.json.encode(made(note="x")) == b'{"note":"x"}'


def test_two_wire_names_of_one_attribute_are_refused() -> None:
    """CLIENT-7: ``fooBar`` and ``foo_bar`` would both be ``foo_bar``; the generator stops rather
    than make a struct that reads one of them as the other."""
    schema = {"properties": {"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}}}
    with pytest.raises(ValueError, match=r"^Clash: two wire names make one attribute: \['fooBar', 'foo_bar'\]$"):
        struct_of("Clash", schema, Types({}), request=False)
