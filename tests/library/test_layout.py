from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.library.notes import make_collection, write
from tideline.errors import BadMeta, PathOutsideLibrary
from tideline.library._layout import Collection, Problem, scan_library, stat_notes
from tideline.library._meta import read_meta
from tideline.library._paths import resolve_inside


def list_notes(collection: Collection, problems: list[Problem] | None = None) -> list[Path]:
    """Every note file of one collection, sorted (what `stat_notes` finds, by path)."""
    return [Path(row[1]) for row in sorted(stat_notes(collection, problems))]


def test_collections_found_at_depth_one_and_two(lib_root: Path) -> None:
    make_collection(lib_root, "infra", "Servers and networks", {"hosts.md": "# Hosts\n"})
    make_collection(lib_root, "work/jira", "Jira tickets", {"notes.md": "# N\n"})
    write(lib_root, "inbox.md", "draft\n")
    layout = scan_library(lib_root)
    assert [c.rel for c in layout.collections] == ["infra", "work/jira"]
    assert layout.problems == []
    jira = layout.by_rel()["work/jira"]
    assert [p.name for p in list_notes(jira)] == ["notes.md"]


def test_folder_without_meta_is_reported_and_invisible(lib_root: Path) -> None:
    write(lib_root, "loose/a.md", "# A\n")
    layout = scan_library(lib_root)
    assert layout.collections == []
    (problem,) = layout.problems
    assert problem.kind == "unregistered"
    assert "memo init-collection loose" in problem.message


def test_too_deep_folders_are_reported_and_not_indexed(lib_root: Path) -> None:
    make_collection(lib_root, "a", "A things", {"top.md": "# top\n", "b/mid.md": "# mid\n"})
    write(lib_root, "a/b/c/deep.md", "# deep\n")
    write(lib_root, "a/b/c/_meta.yaml", "description: too deep\n")
    layout = scan_library(lib_root)
    assert [c.rel for c in layout.collections] == ["a"]
    kinds = {(p.path, p.kind) for p in layout.problems}
    assert ("a/b/c", "too-deep") in kinds
    notes = [p.relative_to(lib_root).as_posix() for p in list_notes(layout.collections[0])]
    assert notes == ["a/b/mid.md", "a/top.md"]


def test_nested_collection_owns_its_folder(lib_root: Path) -> None:
    make_collection(lib_root, "work", "Work in general", {"general.md": "# g\n"})
    make_collection(lib_root, "work/jira", "Jira", {"t.md": "# t\n"})
    layout = scan_library(lib_root)
    work = layout.by_rel()["work"]
    assert [p.name for p in list_notes(work)] == ["general.md"]
    assert layout.collection_of(lib_root / "work/jira/t.md").rel == "work/jira"


def test_broken_meta_names_the_file_and_the_rest_is_found(lib_root: Path) -> None:
    make_collection(lib_root, "good", "Fine", {"x.md": "# x\n"})
    write(lib_root, "bad/_meta.yaml", "description: [unclosed\n")
    write(lib_root, "bad/y.md", "# y\n")
    layout = scan_library(lib_root)
    assert [c.rel for c in layout.collections] == ["good"]
    bad = [p for p in layout.problems if p.kind == "bad-meta"]
    assert bad and "bad/_meta.yaml" in bad[0].message and "not valid YAML" in bad[0].message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("name: x\n", "'description' is required"),
        ("- a\n- b\n", "must be a YAML mapping"),
        ("description: d\nchunker: fancy\n", "unknown chunker"),
        ("description: d\ntags: 5\n", "'tags' must be a list"),
    ],
)
def test_meta_errors_say_what_to_fix(tmp_path: Path, text: str, fragment: str) -> None:
    write(tmp_path, "c/_meta.yaml", text)
    with pytest.raises(BadMeta, match=fragment):
        read_meta(tmp_path / "c", default_name="c")


def test_meta_values_are_typed(tmp_path: Path) -> None:
    write(tmp_path, "c/_meta.yaml", "description: d\ntags: [2026-01-02, 1.10, x]\n")
    meta = read_meta(tmp_path / "c", default_name="c")
    assert meta.name == "c"
    assert meta.tags == ("2026-01-02", "1.1", "x")


def test_paths_outside_the_root_are_refused(lib_root: Path, tmp_path: Path) -> None:
    make_collection(lib_root, "c", "C", {"n.md": "# n\n"})
    outside = tmp_path / "secret"
    outside.mkdir()
    os.symlink(outside, lib_root / "c" / "link")
    assert resolve_inside(lib_root, "c/n.md") == (lib_root / "c/n.md").resolve()
    assert resolve_inside(lib_root, str(lib_root / "c")) == (lib_root / "c").resolve()
    for bad in ("../secret", "/etc/passwd", "c/../../secret", "c/link"):
        with pytest.raises(PathOutsideLibrary, match="outside the library root"):
            resolve_inside(lib_root, bad)


def test_symlinked_note_leading_out_is_reported(lib_root: Path, tmp_path: Path) -> None:
    make_collection(lib_root, "c", "C", {"n.md": "# n\n"})
    secret = write(tmp_path, "secret.md", "# secret\n")
    os.symlink(secret, lib_root / "c" / "s.md")
    problems: list = []
    notes = list_notes(scan_library(lib_root).collections[0], problems)
    assert [p.name for p in notes] == ["n.md"]
    assert problems[0].kind == "link-outside"
