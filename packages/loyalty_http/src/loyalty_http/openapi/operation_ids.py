"""Each operation's ``operationId``: a verb and its resource in camelCase (``lookupCustomer``,
``verifyRedemption``), unique within its document, so generated clients get methods that say what
they do. The handler's name gives it (``list_products`` is ``listProducts``) unless it says too
little out of its module (``read``, ``verify``, ``submit``) or one handler answers several methods:
then this table names the operation, by method and documented path. Two operations of one
document with one id stop the document's build."""

from __future__ import annotations

from typing import Any, Final

OPERATION_IDS: Final[dict[tuple[str, str], str]] = {
    # the public document
    ("PUT", "/api/v1/customers/by-external-id/{external_id}"): "replaceCustomerByExternalId",
    ("PATCH", "/api/v1/customers/by-external-id/{external_id}"): "updateCustomerByExternalId",
    ("GET", "/api/v1/customers/{customer}/ledger"): "listLedgerEntries",
    ("GET", "/api/v1/customers/{customer}/wallet"): "getWallet",
    ("GET", "/api/v1/customers/{customer}/wallet-pass"): "getWalletPass",
    ("GET", "/api/v1/docs"): "getPublicDocs",
    ("GET", "/api/v1/docs/swagger-ui-bundle.js"): "getDocsScript",
    ("GET", "/api/v1/docs/swagger-ui.css"): "getDocsStyle",
    ("GET", "/api/v1/openapi.json"): "getPublicOpenApiDocument",
    ("POST", "/oauth/token"): "issueToken",
    ("PATCH", "/api/v1/products/{external_id}"): "updateProduct",
    ("POST", "/api/v1/products/{external_id}/reward"): "createRewardFromProduct",
    ("POST", "/api/v1/redemptions"): "createRedemption",
    ("GET", "/api/v1/redemptions/{code}"): "getRedemption",
    ("POST", "/api/v1/redemptions/{code}/verify"): "verifyRedemption",
    ("POST", "/api/v1/transactions"): "createTransaction",
    ("POST", "/api/v1/transactions/preview"): "previewTransaction",
    ("GET", "/api/v1/transactions/{transaction_id}"): "getTransaction",
    ("POST", "/api/v1/transactions/{transaction_id}/returns"): "createReturn",
    ("GET", "/api/v1/vouchers/{code}"): "getVoucher",
    ("GET", "/api/v1/events/{event_id}"): "getEvent",
    ("GET", "/api/v1/webhook-endpoints"): "listWebhookEndpoints",
    ("POST", "/api/v1/webhook-endpoints"): "createWebhookEndpoint",
    ("GET", "/api/v1/webhook-endpoints/{endpoint_id}"): "getWebhookEndpoint",
    ("PATCH", "/api/v1/webhook-endpoints/{endpoint_id}"): "updateWebhookEndpoint",
    ("DELETE", "/api/v1/webhook-endpoints/{endpoint_id}"): "deleteWebhookEndpoint",
    ("GET", "/api/v1/webhook-endpoints/{endpoint_id}/deliveries"): "listWebhookDeliveries",
    ("POST", "/api/v1/webhook-endpoints/{endpoint_id}/rotate-secret"): "rotateWebhookSecret",
    ("POST", "/api/v1/webhook-endpoints/{endpoint_id}/test"): "testWebhookEndpoint",
    ("POST", "/api/v1/vouchers/{code}/verify"): "verifyVoucher",
    ("GET", "/health/live"): "checkLiveness",
    ("GET", "/health/ready"): "checkReadiness",
    ("GET", "/unsubscribe/{token}"): "unsubscribeFromCardMail",
    # the admin document
    ("PATCH", "/admin/v1/clients/{client_id}"): "updateClient",
    ("GET", "/admin/v1/docs"): "getAdminDocs",
    ("GET", "/admin/v1/openapi.json"): "getAdminOpenApiDocument",
    ("POST", "/admin/v1/email-suppressions"): "suppressEmail",
    ("PATCH", "/admin/v1/vendors/{vendor_id}"): "updateVendor",
    ("PATCH", "/admin/v1/vendors/{vendor_id}/branches/{external_id}"): "updateBranch",
    ("POST", "/admin/v1/vendors/{vendor_id}/customers/{customer_id}/cards"): "addCustomerCard",
    ("DELETE", "/admin/v1/vendors/{vendor_id}/email-suppressions/{email}"): "releaseEmailSuppression",
    ("GET", "/admin/v1/vendors/{vendor_id}/pass-branding"): "getPassBranding",
    ("PUT", "/admin/v1/vendors/{vendor_id}/pass-branding"): "setPassBranding",
    ("POST", "/admin/v1/vendors/{vendor_id}/redemptions/{code}/cancel"): "cancelRedemption",
    ("POST", "/admin/v1/vendors/{vendor_id}/rewards/{reward_id}/give"): "giveReward",
    ("GET", "/admin/v1/vendors/{vendor_id}/wallet-identity"): "getWalletIdentity",
    ("PUT", "/admin/v1/vendors/{vendor_id}/wallet-identity"): "scriptWalletIdentity",
    ("PUT", "/admin/v1/vendors/{vendor_id}/wallet-identity/certificate"): "importWalletIdentity",
    ("POST", "/admin/v1/vendors/{vendor_id}/wallet-identity/retry"): "retryWalletIdentity",
    ("GET", "/admin/v1/test-clock"): "getTestClock",
    ("PUT", "/admin/v1/test-clock"): "setTestClock",
    ("DELETE", "/admin/v1/test-clock"): "resetTestClock",
    ("GET", "/metrics"): "getMetrics",
}
"""(method, documented path) -> operationId, where the handler's name would not do."""


def operation_id(handler: Any, method: str, path: str) -> str:
    named = OPERATION_IDS.get((method, path))
    if named is not None:
        return named
    if len(handler.http_methods) > 1:
        raise ValueError(f"{handler.handler_name} answers {sorted(handler.http_methods)}: name {method} {path} here")
    return camel_case(str(handler.handler_name))


def camel_case(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word[:1].upper() + word[1:] for word in rest)
