"""platform_a's pass web service under ``/passes/platform_a/v1`` (PASS-10 to PASS-12, PASS-17).

Phones call it, not tills: it answers as the platform's protocol says, with bare statuses and bare
JSON rather than the API's envelope, takes ``Authorization: ApplePass <token>`` of the pass itself,
and counts requests per address (no vendor is known before the pass is found). An unknown pass, or
a known serial under another pass type, answers 404 whatever the token.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

import msgspec
import structlog
from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.errors import DomainError
from loyalty_core.passes.models import WalletPass
from loyalty_core.passes.services.cards import PassCards
from loyalty_core.passes.services.web_service import PassWebService
from loyalty_http.params import Clk, Config, Db, pass_maker_of
from loyalty_http.passes import schemas as s
from loyalty_http.route_options import reads

log = structlog.get_logger("loyalty.passes.web_service")

PKPASS_MEDIA_TYPE = "application/vnd.apple.pkpass"
REGISTRATION = "/devices/{device:str}/registrations/{pass_type:str}"
MAX_LOG_LINES = 20
MAX_LOG_CHARS = 500
MAX_DEVICE_ID = 255
UNKNOWN = {404: "No such pass: an unknown serial, or one under another pass type, whatever the token."}
GUARDED = {
    **UNKNOWN,
    401: "No `Authorization: ApplePass <authenticationToken>` of this pass.",
}


def _bare(status: int, headers: dict[str, str] | None = None) -> Response[None]:
    """A status with no body: the platform's protocol answers these without JSON."""
    return Response(content=b"", status_code=status, headers=headers)  # type: ignore[arg-type]


async def _guarded(
    web: PassWebService, request: Request[Any, Any, Any], pass_type: str, serial: str
) -> WalletPass | int:
    """The pass the path names when the request carries its token, else the status that refuses it:
    404 for an unknown pass whatever the token, 401 without the pass's token (``GUARDED``)."""
    found = await web.find(pass_type, serial)
    if found is None:
        return 404
    if not web.authorized(found, request.headers.get("authorization")):
        return 401
    return found


def _last_modified(at: datetime) -> str:
    return format_datetime(at.astimezone(UTC).replace(microsecond=0), usegmt=True)


def _unchanged_since(header: str | None, changed_at: datetime) -> bool:
    if not header:
        return False
    try:
        since = parsedate_to_datetime(header)
    except (TypeError, ValueError, IndexError):
        return False
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return changed_at.replace(microsecond=0) <= since


class PassWebServiceController(Controller):
    path = "/passes/platform_a/v1"

    @post(
        REGISTRATION + "/{serial:str}",
        opt=reads(
            auth="none",
            limit="address",
            success=(200,),
            protocol={**GUARDED, 400: "The body has no `pushToken`, or the device id is over 255 characters."},
        ),
        status_code=201,
    )
    async def register_pass_device(
        self,
        request: Request[Any, Any, Any],
        device: FromPath[str],
        pass_type: FromPath[str],
        serial: FromPath[str],
        db: Db,
        clock: Clk,
    ) -> Response[None]:
        """Register a device for a pass, with ``{ pushToken }``: 201 new, 200 known (its push token
        taken); 401 without the pass's ``ApplePass`` token, 404 for an unknown pass, 400 for a body
        without a push token."""
        web = PassWebService(db, clock)
        found = await _guarded(web, request, pass_type, serial)
        if isinstance(found, int):
            return _bare(found)
        try:
            body = msgspec.json.decode(await request.body(), type=s.DeviceRegistration)
        except msgspec.DecodeError:
            return _bare(400)
        if not 0 < len(device) <= MAX_DEVICE_ID:
            return _bare(400)
        created = await web.register(found, device, body.push_token)
        return _bare(201 if created else 200)

    @delete(REGISTRATION + "/{serial:str}", opt=reads(auth="none", limit="address", protocol=GUARDED), status_code=200)
    async def unregister_pass_device(
        self,
        request: Request[Any, Any, Any],
        device: FromPath[str],
        pass_type: FromPath[str],
        serial: FromPath[str],
        db: Db,
        clock: Clk,
    ) -> Response[None]:
        """Unregister a device from a pass: 200 (also when it was not registered)."""
        web = PassWebService(db, clock)
        found = await _guarded(web, request, pass_type, serial)
        if isinstance(found, int):
            return _bare(found)
        await web.unregister(found, device)
        return _bare(200)

    @get(
        REGISTRATION,
        opt=reads(
            auth="none",
            limit="address",
            query=s.UpdatedSinceQuery,
            protocol={204: "No pass of the device changed since the tag."},
        ),
    )
    async def list_updated_passes(
        self,
        device: FromPath[str],
        pass_type: FromPath[str],
        params: NamedDependency[s.UpdatedSinceQuery],
        db: Db,
        clock: Clk,
    ) -> Response[s.UpdatedSerials]:
        """The serial numbers of the device's passes of that type changed strictly after the tag
        ``passesUpdatedSince`` (every one without it), with ``lastUpdated``, the tag to ask with
        next; 204 when there are none."""
        found = await PassWebService(db, clock).updated_since(device, pass_type, params.passes_updated_since)
        if found is None:
            return _bare(204)  # type: ignore[return-value]
        serials, tag = found
        return Response(s.UpdatedSerials(serial_numbers=serials, last_updated=tag), status_code=200)

    @get(
        "/passes/{pass_type:str}/{serial:str}",
        opt=reads(
            auth="none",
            limit="address",
            files=(PKPASS_MEDIA_TYPE,),
            protocol={**GUARDED, 304: "Not changed since `If-Modified-Since`."},
        ),
    )
    async def latest_pass(
        self,
        request: Request[Any, Any, Any],
        pass_type: FromPath[str],
        serial: FromPath[str],
        db: Db,
        clock: Clk,
        config: Config,
    ) -> Response[bytes]:
        """The pass as it is now, signed, with ``Last-Modified``; 304 when it has not changed since
        ``If-Modified-Since``."""
        web = PassWebService(db, clock)
        found = await _guarded(web, request, pass_type, serial)
        if isinstance(found, int):
            return _bare(found)  # type: ignore[return-value]
        try:
            _, card = await PassCards(db, clock).for_pass(found.vendor_id, found.customer_id)
        except DomainError:
            return _bare(404)  # type: ignore[return-value]
        await web.records.refresh(found, card)
        modified = {"Last-Modified": _last_modified(found.changed_at)}
        if _unchanged_since(request.headers.get("if-modified-since"), found.changed_at):
            return _bare(304, modified)  # type: ignore[return-value]
        data = await pass_maker_of(config).pkpass(db, clock, card)
        return Response(content=data, media_type=PKPASS_MEDIA_TYPE, headers=modified)

    @post("/log", opt=reads(auth="none", limit="address"), status_code=200)
    async def log_pass_messages(self, request: Request[Any, Any, Any]) -> Response[None]:
        """Messages a device reports (``{ logs: [...] }``): 200 whatever the body; at most 20 lines of
        500 characters each are logged."""
        try:
            body = msgspec.json.decode(await request.body(), type=s.DeviceLog)
        except msgspec.DecodeError:
            body = s.DeviceLog()
        for line in body.logs[:MAX_LOG_LINES]:
            if isinstance(line, str):
                log.info("pass web service log", message=line[:MAX_LOG_CHARS])
        return _bare(200)
