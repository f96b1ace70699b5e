"""A customer's referral code (REFERRAL-6): ``REF-`` and eight characters of the card alphabet,
computed from the customer's id, never stored.

The code is a fixed keyed permutation of the id over ``[0, 31**8)`` written in base 31 with
``random_text.READABLE``: a balanced Feistel network on two halves of ``31**4`` each (addition
modulo ``31**4``, so the domain is exactly ``31**8`` and no cycle walking is needed), its round
keys constants of this module. So a code is

- unique (a permutation of unique ids), with no column, no unique index and no retry loop on a
  collision that cannot happen;
- stable across deployments and releases (the keys are constants: changing them would change every
  code customers already shared), and there from a customer's first read, with no backfill;
- random-looking (consecutive ids give unrelated codes, so a code tells nothing of how many
  customers a shop has and guessing a neighbour's code is as hard as guessing any);
- found again by inverting the permutation (:func:`customer_id_of`): the registration's lookup is
  the customer's primary key.

Ids at or above ``31**8`` (about 8.5e11) have no code.
"""

from __future__ import annotations

import hashlib

from loyalty_core.random_text import READABLE

PREFIX = "REF-"
LENGTH = 8
BASE = len(READABLE)
HALF: int = BASE ** (LENGTH // 2)
DOMAIN: int = HALF * HALF
"""``31**8``: the ids a code exists for."""

_ROUND_KEYS = (
    bytes.fromhex("5f1c9a3e7b2d48c6a0e4f7193b8d2c61"),
    bytes.fromhex("c27e04b9d3165fa8e9207cb4316d5a0f"),
    bytes.fromhex("8a43f61d20bc97e5547a0d3ec8b1f926"),
    bytes.fromhex("1e9bd7042f6ac35880f16e2d9b473ac5"),
    bytes.fromhex("b6052ec8794fd13a6c9e81f40d2753b7"),
    bytes.fromhex("43da8f601b7ec2954e3a07d6f8c91b20"),
)
"""The Feistel rounds' keys: fixed forever (see the module's docstring)."""

_INDEX = {symbol: position for position, symbol in enumerate(READABLE)}


def _round(key: bytes, half: int) -> int:
    digest = hashlib.blake2b(half.to_bytes(4, "big"), key=key, digest_size=8).digest()
    return int.from_bytes(digest, "big") % HALF


def _permute(value: int) -> int:
    left, right = divmod(value, HALF)
    for key in _ROUND_KEYS:
        left, right = right, (left + _round(key, right)) % HALF
    return left * HALF + right


def _unpermute(value: int) -> int:
    left, right = divmod(value, HALF)
    for key in reversed(_ROUND_KEYS):
        left, right = (right - _round(key, left)) % HALF, left
    return left * HALF + right


def referral_code(customer_id: int) -> str | None:
    """The customer's code; None for an id outside the codes' domain."""
    if not 0 <= customer_id < DOMAIN:
        return None
    value = _permute(customer_id)
    symbols = []
    for _ in range(LENGTH):
        value, digit = divmod(value, BASE)
        symbols.append(READABLE[digit])
    return PREFIX + "".join(reversed(symbols))


def customer_id_of(code: str) -> int | None:
    """The id whose code ``code`` is, compared case-insensitively after trimming spaces; None for
    anything that is no well-formed code."""
    text = code.strip().upper()
    if len(text) != len(PREFIX) + LENGTH or not text.startswith(PREFIX):
        return None
    value = 0
    for symbol in text[len(PREFIX) :]:
        digit = _INDEX.get(symbol)
        if digit is None:
            return None
        value = value * BASE + digit
    return _unpermute(value)
