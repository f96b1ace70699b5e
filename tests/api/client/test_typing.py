"""CLIENT-7: the methods made from the generated request functions keep a typed signature on both
clients, so ``mypy --strict`` checks a shop's calls: the parameters, the answer, and an awaitable
answer on the asyncio client (run here, where mypy is installed; the client's own environment has
only httpx and msgspec)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

USE = """
from loyalty_client import AsyncLoyaltyClient, LoyaltyClient
from loyalty_client.models import WalletAdjust


async def use(loyalty: LoyaltyClient, later: AsyncLoyaltyClient) -> None:
    reveal_type(loyalty.adjust_wallet)
    reveal_type(later.adjust_wallet)
    reveal_type(loyalty.iter_webhook_endpoints)
    reveal_type(later.iter_webhook_endpoints)
    reveal_type(await later.get_wallet(3))
    loyalty.adjust_wallet(3, WalletAdjust(amount=1, reason="x"), 4)
    loyalty.get_wallet(customer=None)
"""


def test_mypy_sees_every_method_typed(tmp_path: Path) -> None:
    """CLIENT-7"""
    module = tmp_path / "use.py"
    module.write_text(USE, encoding="utf-8")
    out, _, status = api.run(["--strict", "--no-error-summary", "--hide-error-context", str(module)])
    lines = [line.split(": ", 1)[1] for line in out.splitlines()]
    assert status == 1
    assert lines == [
        'note: Revealed type is "def (customer: str | int, body: '
        'loyalty_client.models.customers.WalletAdjust) -> loyalty_client.models.customers.LedgerEntry"',
        'note: Revealed type is "def (customer: str | int, body: '
        "loyalty_client.models.customers.WalletAdjust) -> typing.Coroutine[Any, Any, "
        'loyalty_client.models.customers.LedgerEntry]"',
        'note: Revealed type is "def (*, per_page: int | None =, page: int | None =) -> '
        'typing.Iterator[loyalty_client.models.webhook_endpoints.Endpoint]"',
        'note: Revealed type is "def (*, per_page: int | None =, page: int | None =) -> '
        'typing.AsyncIterator[loyalty_client.models.webhook_endpoints.Endpoint]"',
        'note: Revealed type is "loyalty_client.models.customers.Wallet"',
        "error: Too many arguments  [call-arg]",
        'error: Argument "customer" has incompatible type "None"; expected "str | int"  [arg-type]',
    ]
