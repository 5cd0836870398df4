"""Markup in a memory's text: inline markup masked for extraction (same length, so every offset stays exact), and
the lines and blocks that are markup rather than statements (docs-tool directives, includes, templates,
reStructuredText's explicit markup and literal blocks), which ``split`` keeps out of the facts."""

from __future__ import annotations

import re

_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"(\[)([^\]]*)(\]\([^)]*\)|\]\[[^\]]*\])")
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>|<[\w.+-]+@[\w-]+\.[\w.-]+>")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>()\[\]]+|\bwww\.[^\s<>()\[\]]+")
_CODE = re.compile(r"(`+)(?:.|\n)*?\1")
_HTML = re.compile(r"</?[A-Za-z][^>\n]*>|<!--(?:.|\n)*?-->")
_EMPHASIS = re.compile(r"(\*\*|__|~~|\*|_)(?=\S)(.+?)(?<=\S)\1", re.S)
_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_HARD_BREAK = re.compile(r"\\(?=\n)| {2,}(?=\n)")
# A line of docs-tool syntax, an include or a template inside a paragraph: "/// tip", "//// tab | Test",
# "!!! note", ":::", "{* ../../docs_src/app.py hl[3] *}", "{!> ../x.md !}", "--8<-- x", "{% for %}", "{{ x }}";
# reStructuredText's explicit markup (".. note::", ".. |pypi| image:: ...", ".. _target: url") with its indented
# options ("   :alt: ..."), substitution rows ("|pypi| |black|") and MyST targets ("(install)=").
LITERAL_NEXT = re.compile(r"::[ \t]*\Z|^[ \t]*\.\.[ \t]+[\w-]+::.*\Z", re.M)
MARKUP_LINE = re.compile(r"[ \t]*(?:/{3,}(?:[ \t]|$)|!!!\s|\?\?\?\+?\s|:{3,}|\{\*.*\*\}[ \t]*$|\{!.*!\}[ \t]*$"
                          r"|-{2}8<-{2}|\{%.*%\}[ \t]*$|\{\{.*\}\}[ \t]*$|\.\.[ \t]+\S|\.\.$"
                          r"|\([\w .-]+\)=[ \t]*$|(?:\|[^|\n]+\|[ \t]*)+$)")
REST_OPTION = re.compile(r"[ \t]+:[\w-]+:(?:[ \t]|$)")  # "   :target: url" under ".. image:: x"



def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def mask_inline(text: str, keep_code: bool = False) -> str:
    """``text`` with inline markup replaced by spaces (same length, line breaks kept); with ``keep_code``,
    inline code stays (where a statement starts and ends: "`--net` is only required ..." starts at its code)."""
    if not keep_code:
        text = _CODE.sub(_blank, text)
    text = _IMAGE.sub(_blank, text)
    text = _AUTOLINK.sub(_blank, text)
    text = _LINK.sub(lambda m: " " + m.group(2) + re.sub(r"[^\n]", " ", m.group(3)), text)
    text = _URL.sub(_blank, text)
    text = _HTML.sub(_blank, text)
    text = _FOOTNOTE.sub(_blank, text)
    text = _HARD_BREAK.sub(_blank, text)
    previous = None
    while previous != text:  # nested emphasis: **a _b_ c**
        previous = text
        text = _EMPHASIS.sub(lambda m: " " * len(m.group(1)) + m.group(2) + " " * len(m.group(1)), text)
    return text.replace("\\", " ")
