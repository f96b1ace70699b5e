"""The redemption endpoints (POST /redemptions, GET /redemptions/{code}, POST .../verify)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.redemptions.services import RedeemRequest
from loyalty_core.redemptions.till_redeem import till_redeem
from loyalty_core.redemptions.till_verify import read_code, verify_answer, verify_riding
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_core.tenancy.till_token_check import CompanionRead
from loyalty_http.params import Clk, Companion, Config, Reader, Writer, given, wake_deliveries
from loyalty_http.redemptions import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope

Caller = NamedDependency[VendorContext]

_REDEEM_ERRORS = (
    "CUSTOMER_NOT_FOUND",
    "CUSTOMER_DEACTIVATED",
    "NO_WALLET",
    "REWARD_NOT_FOUND",
    "REWARD_UNAVAILABLE",
    "BRANCH_NOT_FOUND",
    "BRANCH_INACTIVE",
    "BRANCH_REQUIRED",
    "TIER_REQUIRED",
    "REDEMPTION_LIMIT_REACHED",
    "OUT_OF_STOCK",
    "INSUFFICIENT_BALANCE",
    "IDEMPOTENCY_KEY_CONFLICT",
)
"""Every refusal of a redemption, in the order REDEEM-1 checks them."""


def verify_in_token_check(request: Request[Any, Any, Any], now: datetime) -> CompanionRead:
    """The verify, sent within the token check's statement (``reads(companion=...)``)."""
    return verify_riding(request.path_params["code"], now)


class RedemptionController(Controller):
    path = "/api/v1/redemptions"

    @post(
        "/",
        # a replay of the same idempotency key answers the first redemption again, with 200
        opt=reads(body=s.RedeemBody, errors=_REDEEM_ERRORS, success=(200,)),
        status_code=201,
    )
    async def redeem(
        self, payload: NamedDependency[s.RedeemBody], vendor: Caller, writer: Writer, clock: Clk, config: Config
    ) -> Response[Envelope[s.RedemptionBody]]:
        """201 for a new redemption; a replay answers 200 with the stored creation body (REDEEM-3)."""
        request = RedeemRequest(
            identifier=payload.identifier,
            reward_id=payload.reward_id,
            idempotency_key=payload.idempotency_key,
            branch=given(payload.branch),
        )
        now = clock.now()
        done = await till_redeem(
            writer, vendor.vendor_id, request, default_branch=vendor.default_branch, client_id=vendor.client_id, now=now
        )
        await wake_deliveries(config, done.deliveries)
        body = s.RedemptionBody.of(done.redemption, now, remaining_balance=done.remaining_balance)
        return Response(Envelope(body), status_code=200 if done.replayed else 201)

    @get("/{code:str}", opt=reads(errors=("REDEMPTION_NOT_FOUND",)))
    async def read(self, code: FromPath[str], vendor: Caller, reader: Reader, clock: Clk) -> Envelope[s.RedemptionBody]:
        # one prepared statement in autocommit: no session, no BEGIN/COMMIT (a docstring would show in OpenAPI)
        return Envelope(s.RedemptionBody.of(await read_code(reader, vendor.vendor_id, code), clock.now()))

    @post(
        "/{code:str}/verify",
        opt=reads(
            errors=(
                "REDEMPTION_NOT_FOUND",
                "CODE_ALREADY_USED",
                "CODE_EXPIRED",
                "CODE_CANCELLED",
                "VERIFICATION_FAILED",
            ),
            companion=verify_in_token_check,
        ),
        status_code=200,
    )
    async def verify(
        self, code: FromPath[str], vendor: Caller, reader: Reader, clock: Clk, companion: Companion, config: Config
    ) -> Envelope[s.RedemptionBody]:
        # the verify rode on the token check's statement; a second only to diagnose a code that did not move
        now = clock.now()
        view, deliveries = await verify_answer(reader, vendor.vendor_id, code, companion, now=now)
        await wake_deliveries(config, deliveries)
        return Envelope(s.RedemptionBody.of(view, now))
