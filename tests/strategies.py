"""Hypothesis strategies the property tests share: any JSON value, of any Unicode (lone surrogates included:
JSON can carry them), NaN and numbers past 64 bits."""

from __future__ import annotations

from hypothesis import strategies as st

# every Unicode code point, lone surrogates included (JSON can carry them)
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
                    st.floats(allow_nan=True, allow_infinity=True), ANY_TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(ANY_TEXT, inner, max_size=4)), max_leaves=8)
