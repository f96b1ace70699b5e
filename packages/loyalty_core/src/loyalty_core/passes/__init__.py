"""Wallet passes and the card mail: shops' signing identities (stored sealed), pass branding, the
card-mail cooldown, the global suppression list and the outbox. Building passes and sealing keys is
the service's part, through the ``PassMaker`` port (``services.ports``): this area stores bytes and
states."""
