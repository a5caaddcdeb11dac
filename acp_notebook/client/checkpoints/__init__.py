"""Checkpoints: a snapshot of a session's folder per turn (``checkpointer``), kept in a shadow git
repository outside the user's (``shadow_git``); ``turn.changes()`` / ``revert()`` read them."""
