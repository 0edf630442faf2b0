from __future__ import annotations

import itertools

from tideline.embed import estimate_tokens
from tideline.library._chunker import chunk_markdown

NOTE = """---
id: pg-restore
tags: [postgres, backup]
updated: 2026-01-02
---
# Postgres

Intro line.

## Restore

Use pg_restore.

```bash
## this is a comment, not a heading
pg_restore -d db dump.sql
```

### Pitfalls

Ownership errors.

#### Deep heading stays inside

Still pitfalls.

## Backup

pg_dump nightly.
"""


def test_sections_follow_headings_not_fences() -> None:
    note = chunk_markdown(NOTE, "db/pg.md")
    assert note.note_id == "pg-restore"
    assert note.tags == ("postgres", "backup")
    assert note.updated == "2026-01-02"
    assert note.warnings == []
    got = [(c.heading_path, c.line) for c in note.chunks]
    assert got == [
        (("Postgres",), 6),
        (("Postgres", "Restore"), 10),
        (("Postgres", "Restore", "Pitfalls"), 19),
        (("Postgres", "Backup"), 27),
    ]
    restore = note.chunks[1]
    assert "## this is a comment" in restore.text and "pg_restore -d" in restore.text
    assert "Deep heading stays inside" in note.chunks[2].text
    assert [c.ord for c in note.chunks] == [0, 1, 2, 3]
    lines = NOTE.splitlines()
    for c in note.chunks:  # line numbers point at the chunk's first line in the file
        assert lines[c.line - 1].strip() == c.text.splitlines()[0].strip()


def test_missing_updated_warns_and_no_front_matter_is_fine() -> None:
    note = chunk_markdown("---\nid: x\n---\n# T\nbody\n", "a.md")
    assert note.warnings == ["a.md: front matter has no 'updated' date; add updated: YYYY-MM-DD"]
    assert note.chunks[0].line == 4
    plain = chunk_markdown("# T\nbody\n", "b.md")
    assert plain.warnings == [] and plain.chunks[0].line == 1


def test_broken_front_matter_is_text_with_a_warning() -> None:
    note = chunk_markdown("---\nid: [x\n---\n# T\nbody\n", "c.md")
    assert "not valid YAML" in note.warnings[0]
    assert note.chunks


def test_long_section_is_cut_with_overlap_at_sentences() -> None:
    body = " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(300))
    note = chunk_markdown(f"# Big\n\n## Part\n\n{body}\n", "big.md", max_tokens=200)
    parts = [c for c in note.chunks if c.heading_path == ("Big", "Part")]
    assert len(parts) > 5
    for c in parts:
        assert estimate_tokens(c.text) <= 210  # unit sums plus joins: "about" 200
        assert c.text.rstrip().endswith(".")  # never cut inside a sentence
    for a, b in itertools.pairwise(parts):
        first_of_b = b.text.split(". ")[0]
        assert first_of_b in a.text  # the next piece starts inside the previous one (overlap)
        shared = sum(len(s) for s in b.text.split(". ") if s in a.text)
        assert 0.05 < shared / len(b.text) < 0.3


def test_long_section_cuts_at_paragraphs_first() -> None:
    paras = "\n\n".join(f"Paragraph {i}. " + "word " * 60 for i in range(20))
    note = chunk_markdown(f"## Many\n\n{paras}\n", "p.md", max_tokens=300)
    assert len(note.chunks) > 3
    for c in note.chunks:
        assert c.text.lstrip().startswith(("Paragraph", "## Many"))


def test_huge_fence_is_cut_at_lines_and_never_mid_line() -> None:
    code = "\n".join(f"echo line {i} {'x' * 40}" for i in range(200))
    note = chunk_markdown(f"## Script\n\n```sh\n{code}\n```\n", "s.md", max_tokens=300)
    assert len(note.chunks) > 3
    for c in note.chunks:
        for line in c.text.splitlines():
            assert line.startswith(("echo line", "```", "## Script")) or not line.strip()


def test_token_counter_is_pluggable() -> None:
    words = " ".join(["alpha."] * 100)
    note = chunk_markdown(
        f"## A\n\n{words}\n", "w.md", count_tokens=lambda t: len(t.split()), max_tokens=30
    )
    assert all(len(c.text.split()) <= 30 for c in note.chunks)
