"""Splitting memories as people write them: Markdown blocks, hard-wrapped lines, list items, fields and tables as
facts; code, HTML, front matter, docs-tool directives, includes and templates as markup that is no fact; short
statements joined; headings as sections; spans always exact, masked text always the same length."""

from __future__ import annotations

import pytest

from graphmem.ingest.markup import mask_inline
from graphmem.ingest.split import BLOCK_CHARS, FACTS, FactKind, Span, split_facts, split_memory

DOCUMENT = """---
title: Atlas
tags: [graphs]
---
# Project Atlas

spaCy is commercial
open-source software, released under the
MIT license. See [the guide](https://spacy.io/usage "Usage") for more, e.g. the **install** page.

Name: atlas
Version: 0.1.0
License: MIT

## Install

1. Run `pip install atlas` first.
2. Then *configure* it
   across two lines.

> Dr. Smith wrote the parser. It works.

| option | meaning |
|--------|---------|
| depth  | hops    |

```python
print("never a fact to extract from")
```

<div align="center">logo</div>

Setext heading
--------------

Last words without a stop
"""


def by_kind(spans: list[Span]) -> dict[FactKind, list[str]]:
    out: dict[FactKind, list[str]] = {}
    for span in spans:
        out.setdefault(span.kind, []).append(span.plain)
    return out


def check_exact(content: str, spans: list[Span]) -> None:
    for span in spans:
        assert content[span.start:span.end] == span.text
        assert len(span.clean) == len(span.text)
        assert span.text.strip() == span.text and span.text


def test_statements_are_facts_and_markup_is_not() -> None:
    spans = split_memory(DOCUMENT)
    check_exact(DOCUMENT, spans)
    kinds = by_kind(spans)
    assert kinds[FactKind.sentence] == [
        "spaCy is commercial open-source software, released under the MIT license.",
        "See the guide for more, e.g. the install page.",
        "Dr. Smith wrote the parser. It works.", "Last words without a stop"]  # "It works." is short: joined
    assert kinds[FactKind.field] == ["Name: atlas Version: 0.1.0 License: MIT"]
    assert kinds[FactKind.item] == ["Run first. Then configure it across two lines."]
    assert [text.split()[0] for text in kinds[FactKind.meta]] == ["---"]
    assert len(kinds[FactKind.table]) == 1 and "depth" in kinds[FactKind.table][0]
    assert kinds[FactKind.code] == ['```python print("never a fact to extract from") ```']
    assert kinds[FactKind.html] == ['<div align="center">logo</div>']
    assert split_facts(DOCUMENT) == [span for span in spans if span.kind in FACTS]
    assert {span.kind for span in split_facts(DOCUMENT)} == {FactKind.sentence, FactKind.field, FactKind.item,
                                                             FactKind.table}


DOCS_PAGE = """# First steps

/// tip

Tollgate reads the policy file at start-up.

///

{* ../../docs_src/first_steps/tutorial001.py hl[3] *}

{% for sponsor in sponsors %}
Thanks to our sponsors.
{% endfor %}

.. note::

.. |pypi| image:: https://img.shields.io/pypi/v/tollgate.svg
   :target: https://pypi.org/project/tollgate/

|pypi| |black|

- `--net` is only required when you want to unshare network namespaces.

Use it like this::

   gate = Tollgate()
   gate.run()

On Windows:

```
set TOLLGATE=1
```
"""


def test_directives_includes_and_templates_are_markup_not_facts() -> None:
    spans = split_memory(DOCS_PAGE)
    check_exact(DOCS_PAGE, spans)
    facts = [span.text for span in spans if span.kind in FACTS]
    assert facts == ["Tollgate reads the policy file at start-up.", "Thanks to our sponsors.",
                     "`--net` is only required when you want to unshare network namespaces.", "Use it like this::"]
    markup = " ".join(span.text for span in spans if span.kind not in FACTS)
    for kept in ("{* ../../docs_src", "{% for sponsor", ".. |pypi| image::", ":target:", "|pypi| |black|",
                 "gate = Tollgate()", "On Windows:", "set TOLLGATE=1"):
        assert kept in markup  # in the memory's chunks, searchable, but no fact
    assert {span.kind for span in spans if span.text == "On Windows:"} == {FactKind.caption}


def test_a_long_list_of_short_items_is_several_facts_and_prose_stays_prose() -> None:
    items = split_facts("\n".join(f"- item{i}" for i in range(400)))
    assert len(items) > 10 and all(len(s.text) <= 300 for s in items)
    assert [s.kind for s in split_memory("- Released v2\n  :tada: thanks everyone for the help")] == [FactKind.item]
    assert [s.kind for s in split_memory("The options are::\n\n - a is the first option\n - b is the second")] == [
        FactKind.sentence, FactKind.item, FactKind.item]  # a list after "::" is no literal block


def test_short_statements_join_their_neighbour_and_a_lone_one_stays() -> None:
    assert [s.text for s in split_facts("Kafka moved.\n\nor\n\nThe queue drains at night.")] == [
        "Kafka moved.\n\nor", "The queue drains at night."]
    assert [s.text for s in split_facts("- Redis\n- Kafka\n- Postgres")] == ["Redis\n- Kafka\n- Postgres"]
    assert [(s.text, s.kind) for s in split_facts("Thanks!")] == [("Thanks!", FactKind.sentence)]


def test_headings_are_sections_not_facts() -> None:
    spans = split_facts(DOCUMENT)
    sections = {span.plain: span.section for span in spans}
    assert sections["Dr. Smith wrote the parser. It works."] == "Project Atlas > Install"
    assert sections["spaCy is commercial open-source software, released under the MIT license."] == "Project Atlas"
    assert sections["Last words without a stop"] == "Project Atlas > Setext heading"
    assert not any(span.plain in ("Project Atlas", "Install", "Setext heading") for span in spans)


def test_hard_wrapped_lines_are_one_sentence_with_an_exact_span() -> None:
    content = "Alice joined\nGoogle in 2019\r\nand moved to Zurich. Bob stayed at home."
    spans = split_facts(content)
    check_exact(content, spans)
    assert [s.plain for s in spans] == ["Alice joined Google in 2019 and moved to Zurich.", "Bob stayed at home."]
    assert spans[0].text == "Alice joined\nGoogle in 2019\r\nand moved to Zurich."


def test_markup_is_masked_for_extraction_but_kept_in_the_text() -> None:
    line = ("Use [FastAPI](https://fastapi.tiangolo.com) with `uvicorn main:app`, see <https://x.io> or "
            "https://example.com/a?b=c and **bold** _em_ ~~gone~~ <b>tags</b> ![logo](l.png)[^1].")
    masked = mask_inline(line)
    assert len(masked) == len(line)
    assert " ".join(masked.split()) == "Use FastAPI with , see or and bold em gone tags ."
    (span,) = split_facts(line)
    assert span.text == line and "https://fastapi.tiangolo.com" in span.text


def test_abbreviations_initials_and_lower_case_continuations_do_not_split() -> None:
    content = "J. R. R. Tolkien wrote it, i.e. the book. Prices rose approx. 5 percent. It was ok. and fine."
    assert [s.plain for s in split_facts(content)] == [
        "J. R. R. Tolkien wrote it, i.e. the book.", "Prices rose approx. 5 percent.", "It was ok. and fine."]


def test_a_single_key_value_line_is_prose_and_a_block_of_them_are_fields() -> None:
    assert [s.kind for s in split_facts("Note: the API changed in May.")] == [FactKind.sentence]
    assert {s.kind for s in split_facts("Author: Jo Bloggs\nLicense: MIT")} == {FactKind.field}


def test_long_blocks_are_cut_at_line_breaks() -> None:
    code = "```\n" + "\n".join(f"line_{i} = {i}  # some code here" for i in range(200)) + "\n```"
    spans = split_memory(code)
    check_exact(code, spans)
    assert len(spans) > 1 and all(len(s.text) <= BLOCK_CHARS for s in spans)
    assert {s.kind for s in spans} == {FactKind.code}


@pytest.mark.parametrize("content", ["", "   \n\n  ", "---\n---\n", "```\n```", "#", "* * *", "<!-- only -->"])
def test_empty_and_markup_only_content(content: str) -> None:
    spans = split_facts(content)
    check_exact(content, spans)
    assert all(any(ch.isalnum() for ch in s.text) for s in spans)


def test_unicode_and_tabs_keep_exact_spans() -> None:
    content = "- Zoë\tmoved to Málaga 🌞.\n-\tJosé works at Nestlé 🍫 in Zürich!\n\n>\tQuoted\ttext here."
    spans = split_facts(content)
    check_exact(content, spans)
    assert [s.plain for s in spans] == ["Zoë moved to Málaga 🌞.", "José works at Nestlé 🍫 in Zürich!",
                                        "Quoted text here."]
