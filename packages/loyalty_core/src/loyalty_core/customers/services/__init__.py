"""Customer writes by concern, each a part of ``accounts.services.CustomerService``: identifiers and
cards, profile updates, consent, status changes; ``ports`` names what the area above gives them;
``profiles`` what a caller hands in to register or import a customer; ``card_batches`` the batches of
free cards printed ahead."""
