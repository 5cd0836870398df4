"""Models live as long as the process: once one is loaded, what the process holds is moved out of the cyclic
garbage collector's reach (``gc.freeze``). Its full passes walked every object the models are made of: at 100k
facts one took up to 170 ms in the middle of an export (2.1 s over 160 exports; 96 ms frozen), and during an
ingest of 500 memories nine took 1.07 s (one 262 ms) while they held the interpreter (five ingest runs each way
gave 17.5 and 17.8 memories/s, medians inside the runs' spread)."""

from __future__ import annotations

import gc


def freeze_loaded() -> None:
    """Collect what is garbage now, then leave everything alive out of later collections (called by the model
    loaders, once per model and process)."""
    gc.collect()
    gc.freeze()
