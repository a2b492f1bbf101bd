#!/usr/bin/env python3
"""Finds import circles between the modules of each crate in this repo.

A module is a source file (`foo.rs` or `foo/mod.rs` is module `foo`). Module
A depends on module B when A names a path into B: `use crate::b::...`,
`use super::b::...`, `super::b::item` or `crate::b::item` in code. Paths
are resolved to the longest module that exists; a parent module's
`mod child;` declarations and `pub use` re-exports of its children do not
count as depending on them (the parent is the children's index), but a
child that reaches back into its parent's own items does. Lines in
`#[cfg(test)] mod tests` blocks and comments are skipped.

Prints each strongly connected set of two or more modules and exits 1 if
there is one; prints the module count and exits 0 otherwise.

Usage: python3 tools/import_cycles.py [SRC_DIR ...]   (default: every src/ of the repo)
"""

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)::([^;]*);", re.S)


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    out = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts and parts[0] in ("lib", "main"):
            parts = parts[1:]
        if parts[:1] == ["bin"]:
            continue  # binaries are crates of their own
        out[tuple(parts)] = f
    return out


def strip(text):
    """The code of a file without comments and #[cfg(test)] modules."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def expand_use(root, body):
    """Paths named by one `use root::body;` (with {…} groups), as lists."""
    body = re.sub(r"\s+", "", body)
    def walk(prefix, s):
        if "{" not in s:
            return [prefix + [p for p in s.split("::") if p]]
        head, _, rest = s.partition("{")
        inner = rest[: rest.rfind("}")]
        base = prefix + [p for p in head.split("::") if p]
        items, depth, cur = [], 0, ""
        for ch in inner:
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
                continue
            depth += {"{": 1, "}": -1}.get(ch, 0)
            cur += ch
        items.append(cur)
        paths = []
        for item in filter(None, items):
            paths += walk(base, item.split(" as ")[0])
        return paths
    return walk([root], body)


def resolve(module, path, mods):
    """The module a path from `module` lands in (longest existing prefix)."""
    here = list(module)
    is_dir = mods[module].name == "mod.rs" or mods[module].name in ("lib.rs", "main.rs")
    base = []
    parts = list(path)
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    else:
        # `self` is this module; `super` its parent, for a file module; a
        # mod.rs's `super` is the parent of its directory's module.
        base = here
        while parts and parts[0] in ("self", "super"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
    best = tuple(base)
    cur = list(base)
    for p in parts:
        cur.append(p)
        if tuple(cur) in mods:
            best = tuple(cur)
        else:
            break
    return best


def graph(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for m, f in mods.items():
        code = strip(f.read_text())
        paths = []
        for use in USE_GROUP.finditer(code):
            is_pub_reexport = code[max(0, use.start() - 4): use.start()].endswith("pub ")
            for p in expand_use(use.group(1), use.group(2)):
                paths.append((p, is_pub_reexport))
        code_wo_use = USE_GROUP.sub("", code)
        for hit in PATH.finditer(code_wo_use):
            paths.append(([hit.group(1)] + [p for p in hit.group(2).split("::") if p], False))
        for p, reexport in paths:
            target = resolve(m, p, mods)
            if target == m or target not in mods:
                continue
            # A parent naming its own children is their index, not a
            # dependency in the other direction.
            if len(target) > len(m) and target[: len(m)] == m:
                continue
            edges[m].add(target)
    return mods, edges


def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def name(m):
    return "crate::" + "::".join(m) if m else "crate"


def main():
    srcs = [Path(a) for a in sys.argv[1:]] or sorted(
        p for p in REPO.rglob("src") if p.is_dir() and "target" not in p.parts
        and "node_modules" not in p.parts and (p / "lib.rs").exists() or (p / "main.rs").exists()
    )
    circles = 0
    for src in srcs:
        mods, edges = graph(src)
        for comp in sccs(edges):
            if len(comp) > 1:
                circles += 1
                inner = sorted(name(m) for m in comp)
                print(f"{src}: import circle among {len(comp)} modules:")
                for m in sorted(comp):
                    deps = sorted(name(t) for t in edges[m] if t in comp)
                    print(f"  {name(m)} -> {', '.join(deps)}")
        if not circles:
            print(f"{src}: {len(mods)} modules, no import circle")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
