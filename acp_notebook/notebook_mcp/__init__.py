"""The ``notebook`` MCP server: what the user shares from the live kernel, handed to the agent.

``describe`` (pure) says what a shared object is; ``execute`` runs code in the user's namespace
and collects what it printed, returned, raised and drew; ``server`` is the MCP server (the
official ``mcp`` SDK) with its tools over a ``Share``; ``http`` serves it on 127.0.0.1 inside the
kernel's event loop (never touching signal handlers); ``bridge`` is the stdio process for agents
without HTTP MCP. Nothing here imports the client: the session hands in how to ask approval.
"""
