"""The one API every front end calls: ``MemoryService``, composed of small parts (``memory.py``)."""

from graphmem.service.memory import MemoryService

__all__ = ["MemoryService"]
