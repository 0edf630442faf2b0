"""The README and the quickstart are executable: their console blocks run, line by line, in a
fresh home (a new HOME, no TIDELINE_ or MEMO_ variables, the checkout as the working folder,
`.venv/bin` on PATH, as the README says), and each command prints what the page shows — times,
dates and scores aside, which become placeholders on both sides. A command's exit code is 0
unless its comment says `(exit N)`. So the pages cannot drift from what the program prints.
(The quickstart's `~/Downloads/conversations.json` is tests/data's ChatGPT export.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
QUICKSTART = ROOT / "docs" / "quickstart.md"
MARK = "@@readme-step"
#: What may differ between the README and a run: times and dates, then any decimal number
#: (scores, weights, distances); the home folder is `~`.
PLACEHOLDERS = (
    (re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?Z?)?"), "<time>"),
    (re.compile(r"\d+\.\d+"), "<number>"),
)


@dataclass
class Step:
    command: str
    shown: list[str]

    @property
    def exit_code(self) -> int:
        found = re.search(r"#.*\(exit (\d+)\)", self.command)
        return int(found.group(1)) if found else 0


def console_steps(text: str) -> list[Step]:
    """The `$ ` commands of the README's console blocks, each with the lines it shows."""
    steps: list[Step] = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append(Step(line[2:], []))
            else:
                assert steps, f"output before any command in the README: {line!r}"
                steps[-1].shown.append(line)
    return steps


def normal(lines: list[str], home: str) -> list[str]:
    out = []
    for line in lines:
        line = line.replace(home, "~").rstrip()
        for pattern, token in PLACEHOLDERS:
            line = pattern.sub(token, line)
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


def run_steps(steps: list[Step], home: Path) -> list[tuple[list[str], int]]:
    """Run the commands in one shell (an `export` holds for the ones after it): each one's
    output (stdout and stderr, as a terminal shows them) and exit code."""
    script = "".join(f"echo '{MARK} {n}'\n{s.command}\necho \"{MARK} rc $?\"\n" for n, s in enumerate(steps))  # fmt: skip
    env = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "OMP_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=False, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=600,
    )  # fmt: skip
    results: list[tuple[list[str], int]] = []
    for part in done.stdout.split(f"{MARK} ")[1:]:
        head, _, rest = part.partition("\n")
        if head.startswith("rc "):
            results[-1] = (results[-1][0], int(head[3:]))
        else:
            results.append((rest.splitlines(), -1))
    return results


@pytest.mark.parametrize("page", [README, QUICKSTART], ids=["README", "quickstart"])
def test_the_console_blocks_print_what_they_show(tmp_path: Path, page: Path) -> None:
    steps = console_steps(page.read_text(encoding="utf-8"))
    assert len(steps) >= 6 and any(s.command.startswith("memo write") for s in steps)
    home = tmp_path / "fresh-home"
    (home / "Downloads").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "data" / "chatgpt" / "conversations.json", home / "Downloads")
    results = run_steps(steps, home)
    assert len(results) == len(steps)
    for step, (printed, code) in zip(steps, results, strict=True):
        assert normal(printed, str(home)) == normal(step.shown, str(home)), (
            f"{page.name}: $ {step.command}\nprinted:\n" + "\n".join(printed)
        )
        assert code == step.exit_code, (step.command, code, printed)
    notes = list((home / "notes" / "work").glob("*.md"))
    assert len(notes) == 1 and "vpn-7 is back" in notes[0].read_text()


def test_the_quickstart_links_what_it_names() -> None:
    text = QUICKSTART.read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([a-z]+\.md)\)", text):
        assert (ROOT / "docs" / link).is_file(), link
    for step in ("Install", "Connect a client", "Import", "panel", "library", "local model"):
        assert step in text
    assert "(llm.md)" in text
    assert "docs/quickstart.md" in README.read_text(encoding="utf-8")


def test_the_local_model_step_leads_with_servers_people_run() -> None:
    """Issue 33: the from-source llama-cpp-python build (31 min unfinished at load 8) was the
    step's way in. Each common server comes first with its base URL (with /v1), and the build
    comes last with its measured duration."""
    text = QUICKSTART.read_text(encoding="utf-8").split("## 6.", 1)[1].split("\n## ", 1)[0]
    step = " ".join(text.split())  # a phrase may be wrapped
    servers = {
        "**ollama**": "http://127.0.0.1:11434/v1",
        "**LM Studio**": "http://127.0.0.1:1234/v1",
        "**llama.cpp's `llama-server`**": "http://127.0.0.1:8080/v1",
        "**vLLM**": "http://127.0.0.1:8000/v1",
    }
    for server, url in servers.items():
        assert server in step and f"TIDELINE_LLM_BASE_URL={url}" in step, server
    source = step.index("from source: llama-cpp-python")
    assert all(step.index(server) < source for server in servers)
    assert "4 min 11 s" in step and "did not finish in 31 min" in step
    for name in ("TIDELINE_LLM_BASE_URL", "TIDELINE_LLM_MODEL", "TIDELINE_LLM_API_KEY"):
        assert name in step


def test_the_placeholders_cover_times_and_scores_only() -> None:
    assert normal(["│ turn │ 7  │ 0.940 │ 2026-11-02 │ it expires 2026-12-31. │"], "/h") == [
        "│ turn │ 7  │ <number> │ <time> │ it expires <time>. │"
    ]
    assert normal(["/h/notes created", "3 turns", ""], "/h") == ["~/notes created", "3 turns"]
    steps = console_steps("```console\n$ a  # (exit 1)\nout\n$ b\n```\n")
    assert [(s.command, s.shown, s.exit_code) for s in steps] == [
        ("a  # (exit 1)", ["out"], 1),
        ("b", [], 0),
    ]
