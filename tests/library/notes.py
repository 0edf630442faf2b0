"""Builders for small real libraries on disk."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_collection(root: Path, rel: str, description: str, notes: dict[str, str]) -> Path:
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    write(root, f"{rel}/_meta.yaml", f"name: {rel}\ndescription: {description!r}\ntags: [t]\n")
    for name, text in notes.items():
        write(root, f"{rel}/{name}", text)
    return folder
