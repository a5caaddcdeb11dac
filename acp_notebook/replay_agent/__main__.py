"""Entry point: ``python -m acp_notebook.replay_agent TRACE [--timeout S] [--speed F]``."""

import sys

from .player import main

sys.exit(main())
