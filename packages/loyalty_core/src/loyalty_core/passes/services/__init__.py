"""The passes area's services: what a pass and a card mail are built from (``cards``), accepting a
send-card (``sending``), the card-mail outbox and the suppression list (``outbox``), a shop's
platform_a identity as rows (``identities``), and the ``PassMaker`` port the service implements
(``ports``)."""
