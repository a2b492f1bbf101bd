#!/usr/bin/env python3
"""Checks the relative links of the repo's Markdown files: every linked file
exists, and every `#anchor` names a heading of its target as GitHub spells
it (lowercase, punctuation dropped, spaces as hyphens, `-1` for a repeat).

Links inside fenced code blocks and to http(s) or mailto are skipped.
Prints each broken link as FILE: TARGET and exits 1 if there is one.

Usage: python3 tools/check_links.py [FILE.md ...]   (default: every .md of the repo)
"""

import os
import re
import subprocess
import sys

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def prose(path):
    """The lines of a Markdown file outside fenced code blocks."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                inside = not inside
            elif not inside:
                yield line


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        for line in prose(path):
            m = re.match(r"#+\s+(.*)", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


def markdown_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], capture_output=True,
                         text=True, check=True).stdout.split()
    skip = ("node_modules/", "target/")
    return [os.path.join(root, f) for f in out if not f.startswith(skip) and "/node_modules/" not in f]


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = argv or markdown_files(root)
    broken = 0
    for f in files:
        for line in prose(f):
            for target in LINK.findall(line):
                if re.match(r"(https?|mailto):", target):
                    continue
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
                if not os.path.exists(dest):
                    print(f"{os.path.relpath(f, root)}: {target}: no such file")
                    broken += 1
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    print(f"{os.path.relpath(f, root)}: {target}: no such heading")
                    broken += 1
    if broken:
        return 1
    print(f"check_links: {len(files)} Markdown files, every relative link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
