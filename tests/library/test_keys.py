"""Item keys: a page of examples is found through the one example a query names."""

from __future__ import annotations

from pathlib import Path

from tests.library.notes import make_collection
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.library._item_keys import chunk_keys

TAR = """# tar

> Archiving utility.
> Often combined with a compression method.

- Create an archive and write it to a file:

`tar cf {{target.tar}} {{file1}}`

- Extract an archive into the current directory verbosely:

`tar xvf {{source.tar}}`

- List the contents of a tar file:

`tar tvf {{source.tar}}`
"""


def test_items_take_their_code_and_the_head_keeps_the_rest() -> None:
    keys = chunk_keys(TAR)
    assert [k.kind for k in keys] == ["head", "item", "item", "item"]
    head, first = keys[0], keys[1]
    assert head.text.startswith("# tar") and "Archiving utility." in head.text
    assert "Create an archive" not in head.text
    assert first.text.endswith("`tar cf {{target.tar}} {{file1}}`")
    assert TAR.splitlines()[first.line].startswith("- Create")


def test_tight_lists_nested_items_and_fences() -> None:
    text = "# notes\nIntro.\n\n- one\n- two\n  - nested\n- three\n\n```\ncode\n```\nAfter.\n"
    keys = chunk_keys(text)
    assert [k.text for k in keys] == [
        "# notes\nIntro.\n\nAfter.",
        "- one",
        "- two\n  - nested",
        "- three\n\n```\ncode\n```",
    ]


def test_prose_and_single_items_get_no_keys() -> None:
    assert chunk_keys("# Plan\n\nJust prose, no list.\n") == []
    assert chunk_keys("# Plan\n\n- only one item\n") == []


def test_a_hit_on_an_item_returns_its_page_once_with_the_example(lib_root: Path) -> None:
    other = "# zip\n\n> Package files.\n\n- Pack files:\n\n`zip out.zip a b`\n\n- Unpack:\n\n`unzip x`\n"
    make_collection(lib_root, "cmds", "Commands", {"tar.md": TAR, "zip.md": other})
    with library_from(DEFAULTS, lib_root, None) as lib:
        reports = lib.index()
        assert reports[0].keys_written == 7
        assert lib.status()["collections"][0]["keys"] == 7
        assert lib.status()["collections"][0]["chunks"] == 2
        hits = lib.search("extract verbosely", "cmds", k=5, mode="lex").hits
        assert [h.path for h in hits] == ["cmds/tar.md"]  # the page once, not page + item
        assert hits[0].line == 10 and hits[0].match.startswith("- Extract an archive")
        assert hits[0].text.startswith("# tar")


def test_keys_off_indexes_pages_only(lib_root: Path) -> None:
    make_collection(lib_root, "cmds", "Commands", {"tar.md": TAR})
    with library_from(DEFAULTS, lib_root, None, keys="off") as lib:
        assert lib.index()[0].keys_written == 0
        (hit,) = lib.search("extract verbosely", "cmds", k=5, mode="lex").hits
        assert hit.line == 1 and hit.match is None


def test_changing_the_key_mode_rebuilds_the_index(lib_root: Path) -> None:
    make_collection(lib_root, "cmds", "Commands", {"tar.md": TAR})
    with library_from(DEFAULTS, lib_root, None) as lib:
        assert lib.index()[0].keys_written == 4  # head + 3 items
    with library_from(DEFAULTS, lib_root, None, keys="off") as lib:
        (report,) = lib.index()
        assert report.keys_written == 0 and report.changed == 1
        assert any("keys 'items' -> 'off'" in w for w in report.warnings)
        assert lib.status()["collections"][0]["keys"] == 0
