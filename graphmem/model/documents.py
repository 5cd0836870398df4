"""Inputs of the document calls: new memories, updates, forgetting, lists and history, the time view, and
the caller's context."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from graphmem.model.fields import (
    HARD_LIMITS,
    INT64,
    MAX_OFFSET,
    Content,
    Cursor,
    Flag,
    Id,
    Input,
    Metadata,
    Millis,
    Path,
    PathFilter,
    RequestId,
    Source,
    Title,
    check_namespace,
    limited,
    within,
)

# ---- views and filters --------------------------------------------------------------------------------


class View(Input):
    """Which versions a read sees.

    * current (default): latest versions, not forgotten;
    * ``as_of=T``: versions recorded at or before T and not superseded at T (epoch ms UTC);
    * ``include_superseded``: old versions too; ``include_forgotten``: forgotten memories too.
    """

    model_config = ConfigDict(strict=True)

    as_of: Millis = None
    include_forgotten: bool = False
    include_superseded: bool = False


CURRENT = View()


class SearchFilters(Input):
    """Narrowing a search beyond the view: recorded time window (epoch ms UTC, inclusive), one entity the
    facts must mention, one document (version) they must belong to, one document source, a folder (``path``:
    exact, or a prefix written ``a/b%``). Applied inside every retrieval statement (the ``fact_filters``
    fragment of ``cypher/views.cypher``)."""

    since: Millis = None
    until: Millis = None
    entity_id: Id | None = None
    document_id: Id | None = None
    source: Annotated[str, Field(strict=True, min_length=1, max_length=HARD_LIMITS.source_chars)] | None = None
    path: PathFilter | None = None

    @model_validator(mode="after")
    def _window(self) -> SearchFilters:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since must not be after until")
        return self

    def filters(self) -> SearchFilters:
        """Only the filters of a model that extends them (what the statements receive)."""
        return SearchFilters(**{name: getattr(self, name) for name in SearchFilters.model_fields})


NO_FILTERS = SearchFilters()


# ---- documents ----------------------------------------------------------------------------------------


class DocumentInput(Input):
    """A new memory."""

    content: Content
    title: Title = None
    source: Source = None
    metadata: Metadata = None
    path: Path | None = None
    request_id: RequestId = None


    def stamped(self, client: str, credential: str | None) -> DocumentInput:
        """This memory with where it came from in its metadata: the front end (``client``) and the
        credential's name, written over any of the caller's keys of those names."""
        metadata: dict[str, str | int | float | bool] = {**(self.metadata or {}), "client": client}
        if credential is not None:
            metadata["credential"] = credential
        return self.model_copy(update={"metadata": metadata})


EXCHANGE = "User: {user}\nAssistant: {assistant}"  # one memory: the roles stay in the text
# each side's bound follows from the one content bound: the two with their labels always fit
TURN_CHARS = (HARD_LIMITS.content_chars - len(EXCHANGE.format(user="", assistant=""))) // 2
Turn = Annotated[str, Field(min_length=1, max_length=TURN_CHARS)]


class Exchange(Input):
    """One turn of a conversation: what the user said and what the assistant answered, kept as one memory."""

    user_message: Turn
    assistant_message: Turn
    conversation_id: Annotated[str | None, Field(max_length=100)] = None

    def document(self) -> DocumentInput:
        metadata: dict[str, str | int | float | bool] = {"kind": "exchange", "roles": "user,assistant"}
        if self.conversation_id:
            metadata["conversation_id"] = self.conversation_id
        return DocumentInput(content=EXCHANGE.format(user=self.user_message, assistant=self.assistant_message),
                             metadata=metadata)


class IngestItem(Input):
    """A memory from a file or a JSONL line. ``versioned``: its source is its identity (a file), so a
    changed file becomes a new version of the current memory with that source."""

    document: DocumentInput
    versioned: Flag = False


class UpdateInput(Input):
    """A new version of a memory. ``title``, ``metadata`` and ``path`` left out (None) keep the current ones."""

    content: Content
    title: Title = None
    metadata: Metadata = None
    path: Path | None = None
    expected_version: Annotated[int | None, Field(strict=True, ge=1, le=INT64[1],
                                                  description="compare-and-swap on the latest version")] = None
    request_id: RequestId = None


class ForgetMode(StrEnum):
    soft = "soft"
    hard = "hard"
    redact = "redact"


class ForgetRequest(Input):
    mode: ForgetMode = ForgetMode.soft
    reason: Annotated[str | None, Field(strict=True, max_length=500, description="kept on the versions")] = None
    request_id: RequestId = None


class MemoryDetailOptions(Input):
    """How much of a memory's facts and entities one read returns (in position and name order)."""

    facts: Annotated[int, Field(strict=True, ge=0, le=1000)] = 200
    entities: Annotated[int, Field(strict=True, ge=0, le=1000)] = 200


PageLimit = Annotated[int, Field(strict=True), within(1, HARD_LIMITS.page_size_max), limited("page_size_max", "count")]


def _offset(value: int) -> int:
    if value > MAX_OFFSET:
        raise ValueError(f"must be from 0 to {MAX_OFFSET}; page deeper with the cursor (next_cursor)")
    return value


MAX_IN = 100  # values of one "in" condition
Phrase = Annotated[str, Field(strict=True, min_length=1, max_length=500)]
IdList = Annotated[list[Id], Field(min_length=1, max_length=MAX_IN)]
PhraseList = Annotated[list[Phrase], Field(min_length=1, max_length=MAX_IN)]


class DocumentSort(StrEnum):
    """The orders a list of memories comes in, each with its own keyset statement."""

    newest = "newest"  # recorded time, newest first (then id)
    oldest = "oldest"  # recorded time, oldest first (then id)
    by_title = "title"  # title A-Z, untitled first (then id)


class DocumentWhere(Input):
    """Conditions on a list of memories; all must hold. Each is a parameter of the list statements (null:
    no condition), so no query text is built from them."""

    ids: IdList | None = None
    chain_id: Id | None = None
    title: Phrase | None = None
    title_contains: Phrase | None = None
    title_starts_with: Phrase | None = None
    sources: PhraseList | None = None
    recorded_after: Millis = None
    recorded_before: Millis = None


class DocumentListOptions(Input):
    """A page of a namespace's memories in ``sort`` order (newest first by default). Either ``cursor``
    (keyset paging, stable while memories are added) or ``offset`` (at most ``MAX_OFFSET``)."""

    limit: PageLimit = 20
    offset: Annotated[int, Field(strict=True, ge=0), AfterValidator(_offset)] = 0
    cursor: Cursor = None
    view: View = CURRENT
    path: PathFilter | None = None
    where: DocumentWhere = DocumentWhere()
    sort: DocumentSort = DocumentSort.newest
    item_cursors: Flag = Field(False, description="a cursor after each item too (a GraphQL edge's)")

    @model_validator(mode="after")
    def _one_way(self) -> DocumentListOptions:
        if self.cursor is not None and self.offset:
            raise ValueError("give either a cursor or an offset, not both")
        return self


class FactSort(StrEnum):
    """The orders a list of facts comes in, each with its own keyset statement."""

    newest = "newest"  # recorded time, newest first (then id)
    oldest = "oldest"  # recorded time, oldest first (then id)


class FactWhere(Input):
    """Conditions on a list of facts; all must hold (each a parameter of the list statements)."""

    memory_ids: IdList | None = None
    entity_id: Id | None = Field(None, description="facts that mention it")
    text_contains: Phrase | None = None
    kinds: Annotated[list[Annotated[str, Field(strict=True, max_length=20)]], Field(min_length=1, max_length=10)] \
        | None = None
    recorded_after: Millis = None
    recorded_before: Millis = None


class FactListOptions(Input):
    """A page of a namespace's facts in ``sort`` order, by keyset ``cursor``."""

    limit: PageLimit = 20
    cursor: Cursor = None
    view: View = CURRENT
    path: PathFilter | None = None
    where: FactWhere = FactWhere()
    sort: FactSort = FactSort.newest
    item_cursors: Flag = Field(False, description="a cursor after each item too (a GraphQL edge's)")


class EntitySort(StrEnum):
    """The orders a list of entities comes in, each with its own keyset statement."""

    name = "name"  # name A-Z (then id)
    name_desc = "name_desc"  # name Z-A (then id)


class EntityWhere(Input):
    """Conditions on a list of entities; all must hold (each a parameter of the list statements)."""

    ids: IdList | None = None
    name: Phrase | None = None
    name_contains: Phrase | None = None
    name_starts_with: Phrase | None = None
    types: PhraseList | None = None


class EntityListOptions(Input):
    """A page of a namespace's entities (those a fact of the view mentions; with ``path``, a fact in that
    folder) in ``sort`` order, by keyset ``cursor``."""

    limit: PageLimit = 20
    cursor: Cursor = None
    view: View = CURRENT
    path: PathFilter | None = None
    where: EntityWhere = EntityWhere()
    sort: EntitySort = EntitySort.name
    item_cursors: Flag = Field(False, description="a cursor after each item too (a GraphQL edge's)")


class HistoryOptions(Input):
    """A page of a memory's versions, newest first."""

    limit: Annotated[int, Field(strict=True), limited("history_max", "count")] = 100
    cursor: Cursor = None

# ---- callers ------------------------------------------------------------------------------------------


class CallerContext(BaseModel):
    """Who is calling, reduced to what the service needs: the namespaces it may read and write, and the
    credential it came with (its name is the author of a handoff; None for the local operator).

    Built by the identity module for real callers; tests build it directly. Writing implies reading.
    """

    model_config = ConfigDict(frozen=True)

    read: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()
    credential_id: str | None = None
    credential_name: str | None = None

    @field_validator("read", "write")
    @classmethod
    def _names(cls, value: frozenset[str]) -> frozenset[str]:
        for namespace in value:
            check_namespace(namespace)
        return value

    @classmethod
    def for_namespaces(cls, *namespaces: str, writable: bool = True) -> CallerContext:
        names = frozenset(namespaces)
        return cls(read=names, write=names if writable else frozenset())

    @property
    def readable(self) -> list[str]:
        """Sorted, so the same caller sends the same query parameters."""
        return sorted(self.read | self.write)

    def can_read(self, namespace: str) -> bool:
        return namespace in self.read or namespace in self.write

    def can_write(self, namespace: str) -> bool:
        return namespace in self.write
