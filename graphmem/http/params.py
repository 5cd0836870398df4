"""/v1 query parameters made from the service's models (``model/flat.py``): each field is a parameter of its
own name, with the model's default and description. FastAPI turns the query string into the field's type;
the model, which the route builds, checks the bounds (a broken one is 400 ``invalid_input`` naming the
parameter, as ``errors.named`` says)."""

from __future__ import annotations

from typing import Any

from fastapi import Query

from graphmem.model.flat import Flat


def as_query(flat: Flat) -> Any:
    return Query(flat.default, description=flat.help or None)
