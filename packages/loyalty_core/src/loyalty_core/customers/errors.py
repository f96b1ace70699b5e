"""Customer errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import Conflict, NotFound, RuleViolation


class CustomerNotFound(NotFound):
    code = "CUSTOMER_NOT_FOUND"


class ExternalIdNotFound(NotFound):
    code = "EXTERNAL_ID_NOT_FOUND"


class CustomerAlreadyLinked(Conflict):
    code = "CUSTOMER_ALREADY_LINKED"


class ExternalIdDuplicate(Conflict):
    code = "EXTERNAL_ID_DUPLICATE"


class IdentifierDuplicate(Conflict):
    code = "IDENTIFIER_DUPLICATE"


class LoyaltyCardNotFound(RuleViolation):
    code = "LOYALTY_CARD_NOT_FOUND"


class MarketingConsentUnderAge(RuleViolation):
    code = "MARKETING_CONSENT_UNDER_AGE"


class CustomerDeactivated(RuleViolation):
    code = "CUSTOMER_DEACTIVATED"


class AdminCardNotFound(NotFound):
    """The admin API's 404 for a card path that names no card of the vendor."""

    code = "NOT_FOUND"


class AdminIdentifierNotFound(NotFound):
    """The admin API's 404 for an identifier path the customer does not hold."""

    code = "NOT_FOUND"


class CardBatchNotFound(NotFound):
    """A batch id that names no batch of the vendor."""

    code = "NOT_FOUND"
