"""The live asyncio client: agent process, connection, sessions, permissions."""
