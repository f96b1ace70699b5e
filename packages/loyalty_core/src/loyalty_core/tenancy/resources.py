"""A branch as the public API shows it beside the resources that name one (a reward, a redemption, a
voucher, a transaction): its label, never its internal id.

The response shapes live in the core, one ``resources`` module per area, so every part of the
service that answers or announces a resource builds the same shape without the web layer."""

from __future__ import annotations

from typing import Protocol

import msgspec


class Labelled(Protocol):
    """Anything that carries a branch's label: the branch row or a statement's read of it."""

    @property
    def external_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...


class BranchShown(msgspec.Struct):
    external_id: str
    name: str
    type: str

    @classmethod
    def of(cls, b: Labelled) -> BranchShown:
        return cls(external_id=b.external_id, name=b.name, type=b.type)
