"""Runs `mypy --strict` on every ```python block of README.md (scripts/typecheck.sh).

Each block becomes a module of its own in a temporary directory, on the same lines as in the
README (blank lines above it), after one line that star-imports ``readme_context.pyi``: the names
the README's fragments take from the prose around them. mypy's messages are then printed with
``README.md:<line>`` in place of the module's path.

    .venv/bin/python tests/python/typecheck/check_readme.py [README.md]
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CONTEXT_IMPORT = "from readme_context import *  # names the README's prose provides\n"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``[(line of the block's first code line, code)]`` for every ```python fence (1-based)."""
    blocks: list[tuple[int, str]] = []
    lines = text.splitlines(keepends=True)
    start = None
    for number, line in enumerate(lines, start=1):
        if start is None and line.strip() == "```python":
            start = number + 1
        elif start is not None and line.strip() == "```":
            blocks.append((start, "".join(lines[start - 1 : number - 1])))
            start = None
    if start is not None:
        raise SystemExit(f"README.md:{start - 1}: ```python block is not closed")
    return blocks


def main() -> int:
    readme = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "README.md"
    blocks = python_blocks(readme.read_text(encoding="utf-8"))
    if not blocks:
        print(f"{readme}: no ```python blocks", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="depositkit-readme-") as tmp:
        work = pathlib.Path(tmp)
        shutil.copy(HERE / "readme_context.pyi", work / "readme_context.pyi")
        files: dict[str, int] = {}
        for first_line, code in blocks:
            name = f"readme_line_{first_line}.py"
            # Line 1 is the context import; the code keeps its README line numbers (first_line >= 2).
            (work / name).write_text(CONTEXT_IMPORT + "\n" * (first_line - 2) + code, encoding="utf-8")
            files[name] = first_line
        run = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(work / ".mypy_cache"), *files],
            cwd=work,
            capture_output=True,
            text=True,
        )
    pattern = re.compile(r"^readme_line_\d+\.py:", re.MULTILINE)
    output = pattern.sub(f"{readme.name}:", run.stdout + run.stderr)
    sys.stdout.write(output)
    if run.returncode == 0:
        print(f"{readme.name}: {len(blocks)} python blocks pass mypy --strict")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
