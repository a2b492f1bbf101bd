#!/usr/bin/env python3
"""Runs the build stage of the Dockerfile without a Docker daemon, on exactly
the files its COPY lines would put in the image.

The build context is what a clean clone holds (`git ls-files`, plus untracked
files git does not ignore) less what .dockerignore excludes. The first stage's
WORKDIR, ENV, COPY and RUN lines are replayed in a scratch directory: COPY
copies from that context only, RUN runs with bash in the stage's working
directory. A file the build needs but no COPY line brings (or .dockerignore
drops) makes the RUN step fail here as it would in `docker build`.

Usage: python3 tools/dockerfile_build.py [--keep DIR] [--dry-run]
Exit status: 0 when every RUN step succeeded, 1 otherwise.
"""

import argparse
import fnmatch
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parent.parent


def instructions(dockerfile):
    """The Dockerfile's instructions as (keyword, argument text), with line
    continuations joined and comments dropped."""
    out, pending = [], ""
    for raw in dockerfile.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        keyword, _, rest = line.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def first_stage(steps):
    """The instructions of the first build stage (up to the second FROM)."""
    stage, seen_from = [], False
    for keyword, rest in steps:
        if keyword == "FROM":
            if seen_from:
                break
            seen_from = True
            continue
        stage.append((keyword, rest))
    return stage


def ignore_patterns():
    path = REPO / ".dockerignore"
    if not path.exists():
        return []
    patterns = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            patterns.append(line)
    return patterns


def ignored(path, patterns):
    """Whether .dockerignore excludes `path`: the last pattern that matches
    the path or one of its parent directories decides; `!` re-includes."""
    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    verdict = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pat = pattern[1:] if negate else pattern
        pat = pat.strip("/")
        pat = pat.replace("**/", "*").replace("/**", "/*")
        if any(fnmatch.fnmatchcase(p, pat) for p in prefixes):
            verdict = not negate
    return verdict


def context_files():
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO, check=True, capture_output=True,
    ).stdout.decode()
    patterns = ignore_patterns()
    files = []
    for name in filter(None, listed.split("\0")):
        if not (REPO / name).is_file():
            continue  # deleted in the work tree
        if not ignored(name, patterns):
            files.append(name)
    return sorted(files)


def copy(srcs, dest, files, root, workdir):
    """COPY srcs... dest, from the context `files` into `root`, as Docker
    copies: a directory's contents into dest, a file into dest (into the
    directory dest when it ends in / or there are several sources)."""
    dest_path = PurePosixPath(workdir) / dest
    target = root / str(dest_path).lstrip("/")
    into_dir = dest.endswith("/") or len(srcs) > 1
    copied = 0

    def put(name, out):
        nonlocal copied
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, out)
        copied += 1

    for src in srcs:
        src = str(PurePosixPath(src))  # drops ./ and a trailing /
        matched = False
        for name in files:
            if src == ".":
                put(name, target / name)
            elif name.startswith(src + "/"):
                put(name, target / name[len(src) + 1:])
            elif name == src or fnmatch.fnmatchcase(name, src):
                put(name, target / PurePosixPath(name).name if into_dir else target)
            else:
                continue
            matched = True
        if not matched:
            sys.exit(f"dockerfile-build: COPY {src}: no such file in the build context")
    return copied


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="build in this directory and keep it")
    parser.add_argument("--dry-run", action="store_true", help="copy, but run no RUN step")
    args = parser.parse_args()

    stage = first_stage(instructions(REPO / "Dockerfile"))
    files = context_files()
    if args.keep:
        root = Path(args.keep)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="dockerfile-build."))
    workdir, env = "/", dict(os.environ)
    env.pop("CARGO_TARGET_DIR", None)  # the build's own target/, as in the image
    ok = True
    try:
        for keyword, rest in stage:
            if keyword == "WORKDIR":
                workdir = str(PurePosixPath(workdir) / rest)
                (root / workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
            elif keyword == "ENV":
                words = shlex.split(rest)
                if len(words) == 2 and "=" not in words[0]:
                    env[words[0]] = words[1]
                else:
                    for word in words:
                        key, _, value = word.partition("=")
                        env[key] = value
            elif keyword == "COPY":
                words = [w for w in shlex.split(rest) if not w.startswith("--")]
                if any(w.startswith("--from") for w in shlex.split(rest)):
                    continue
                n = copy(words[:-1], words[-1], files, root, workdir)
                print(f"dockerfile-build: COPY {rest}: {n} files")
            elif keyword == "RUN":
                print(f"dockerfile-build: RUN {rest}", flush=True)
                if args.dry_run:
                    continue
                cwd = root / workdir.lstrip("/")
                done = subprocess.run(["bash", "-c", rest], cwd=cwd, env=env)
                if done.returncode != 0:
                    print(f"dockerfile-build: RUN failed with exit status {done.returncode}",
                          file=sys.stderr)
                    ok = False
                    break
            elif keyword in ("ARG", "LABEL", "EXPOSE", "USER", "ENTRYPOINT", "CMD", "SHELL"):
                continue
            else:
                sys.exit(f"dockerfile-build: {keyword} is not replayed here; teach tools/dockerfile_build.py")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    verdict = "copied; RUN skipped" if args.dry_run else "the build stage succeeded" if ok else "the build stage FAILED"
    print(f"dockerfile-build: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
