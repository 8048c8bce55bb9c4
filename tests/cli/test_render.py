"""Tables drawn without rich look exactly as rich draws them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.cli.render import Column, _plain_table, _rich_table

texts = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=12)
tables = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        st.lists(st.tuples(texts, st.sampled_from(["left", "right"])), min_size=n, max_size=n),
        st.lists(st.lists(texts, min_size=n, max_size=n), max_size=8),
        st.one_of(st.none(), texts),
        st.integers(20, 120),
    )
)


@settings(max_examples=300, deadline=None)
@given(tables)
def test_a_plain_table_is_what_rich_draws(table: tuple) -> None:
    headers, cells, title, width = table
    columns = [Column(title=h, key=str(i), justify=j) for i, (h, j) in enumerate(headers)]
    plain = _plain_table(columns, cells, title, width)
    if plain is not None:
        assert plain == _rich_table(columns, cells, title, width)


def test_wide_or_unusual_tables_are_left_to_rich() -> None:
    columns = [Column("NAME", "name")]
    assert _plain_table(columns, [["x" * 200]], None, 80) is None
    assert _plain_table(columns, [["caf\u00e9"]], None, 80) is None
    assert _plain_table([Column("N", "n", "center")], [["x"]], None, 80) is None
    assert _plain_table(columns, [["  padded"]], None, 80) is None
    assert _plain_table(columns, [["a"], ["bb"]], None, 80) == [" NAME", " \u2500\u2500\u2500\u2500", " a", " bb"]
