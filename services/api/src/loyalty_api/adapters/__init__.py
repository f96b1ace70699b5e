"""What the service uses to reach the world outside its process, behind core's ports and the jobs:
the card mail's message and its sender (SMTP, or ``.eml`` files), the webhook sender and the sealer
of webhook secrets, the wallet pass platforms with their identity requests, and the files generated
once under ``LOYALTY_HOME``. Nothing here imports the composition root or the jobs (an import-linter
contract in ``pyproject.toml``)."""
