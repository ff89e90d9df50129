"""The one view grammar: every form, its canonical spelling, and its refusals."""

from __future__ import annotations

import pytest

from nasfs.errors import BadView, NotFound
from nasfs.grammar import View, parse_view, split_name


@pytest.mark.parametrize(
    "text, expected",
    [
        ("outline", View("outline")),
        ("L12-L18", View("lines", 12, 18)),
        ("L12", View("lines", 12, 12)),
        ("section=Renewal", View("section", arg="Renewal")),
        ("section=Cls.method@200", View("section", arg="Cls.method", budget=200)),
        ("section=a%2Fb%40c", View("section", arg="a/b@c")),
        ("since=v1", View("since", arg="v1")),
        ("summary", View("summary")),
        ("400", View("best", budget=400)),
        ("400.json", View("best", budget=400, json=True)),
        ("outline@120", View("outline", budget=120)),
        ("outline.json", View("outline", json=True)),
        ("L3-L4@50.json", View("lines", 3, 4, budget=50, json=True)),
        ("0", View("best", budget=0)),
        ("1000000000000", View("best", budget=10**12)),
    ],
)
def test_parse_view_forms(text: str, expected: View) -> None:
    assert parse_view(text) == expected


@pytest.mark.parametrize("text", ["outline", "L12-L18", "section=Renewal@200", "400.json", "since=v1@30.json"])
def test_spelling_round_trips(text: str) -> None:
    assert parse_view(parse_view(text).spelled()) == parse_view(text)


@pytest.mark.parametrize(
    "text, says",
    [
        ("outlines", "unknown view"),
        ("L0", "start at 1"),
        ("L9-L3", "ends before it starts"),
        ("section=", "needs a value"),
        ("", "empty view"),
        ("outline@99999999999999999", "budget"),
        ("L1-L", "unknown view"),
    ],
)
def test_bad_views_say_what_is_valid(text: str, says: str) -> None:
    with pytest.raises(BadView) as err:
        parse_view(text)
    assert says in str(err.value)
    assert "valid:" in str(err.value)


def test_real_names_with_at_win() -> None:
    real = {"user@host.txt", "@scope", "notes.md"}
    exists = real.__contains__
    is_file = lambda n: n in real and not n.startswith("@")  # noqa: E731
    assert split_name("@scope", exists, is_file) == ("@scope", View("raw"))
    assert split_name("user@host.txt", exists, is_file) == ("user@host.txt", View("raw"))
    assert split_name("user@host.txt@outline", exists, is_file) == ("user@host.txt", View("outline"))
    assert split_name("notes.md@L2", exists, is_file) == ("notes.md", View("lines", 2, 2))
    with pytest.raises(NotFound, match="no file"):
        split_name("other.md@outline", exists, is_file)
    with pytest.raises(NotFound, match="no file"):
        split_name("other.md", exists, is_file)
    with pytest.raises(BadView, match="unknown view"):
        split_name("notes.md@bogus", exists, is_file)


def test_section_name_ending_in_json_has_two_readings() -> None:
    view = parse_view("section=Message.json")
    assert (view.arg, view.json) == ("Message", True)  # the envelope of Message, unless the file says otherwise
    assert view.name_with_json() == View("section", arg="Message.json")
    assert parse_view("section=Message.json@200") == View("section", arg="Message.json", budget=200)
    assert parse_view("section=Message%2Ejson") == View("section", arg="Message.json")
    for one_reading in ("section=Message.json@200.json", "outline.json", "section=Message"):
        assert parse_view(one_reading).name_with_json() is None


def test_outline_from_a_top_level_entry() -> None:
    assert parse_view("outline=41@2000") == View("outline", 41, budget=2000)
    assert parse_view("outline=41@2000").spelled() == "outline=41@2000"
    assert parse_view("outline=7.json") == View("outline", 7, json=True)
    assert parse_view("outline").spelled() == "outline"
    with pytest.raises(BadView, match="count from 1"):
        parse_view("outline=0")
