"""A small real-looking library: two collections of notes with distinct sections."""

from __future__ import annotations

from pathlib import Path

from tests.library.notes import make_collection

INFRA = """---
id: infra-runbook
tags: [infra]
updated: 2026-09-01
---
# Infrastructure runbook

## Restoring the Postgres database

When the database is lost or corrupted, stop the application, fetch last night's dump from the
backup bucket and run `pg_restore --clean --dbname=app nightly.dump`. Check row counts afterwards.

## Policy based routing

PBR (policy based routing) on the edge router sends VoIP traffic through the second uplink.
The firewall rule number is 4711; do not renumber it.

## Rotating TLS certificates

Certbot renews the certificates every 60 days. A cron job reloads nginx after renewal.
"""

HOME = """# Home

## Sourdough bread

Feed the starter the night before. Mix flour, water and salt, fold four times, bake at 250 C.

## Watering the garden

Tomatoes need water every morning in July; the drip line timer is set to 20 minutes.
"""

BOOKS = """# Books

## The Master and Margarita

A novel by Bulgakov about the devil visiting Moscow; manuscripts don't burn.
"""


def build(root: Path) -> Path:
    make_collection(root, "infra", "Servers, networks, databases: runbooks", {"runbook.md": INFRA})
    make_collection(
        root, "life/home", "Cooking and the garden", {"home.md": HOME, "books.md": BOOKS}
    )
    return root
