"""Writes benches/hot_code.order: the functions of toolshelf's release build that serve calls,
then those of its start-up, for the linker to lay out together (build.rs says why).

    python3 benches/hot_code.py            (about 10 minutes: two release links, callgrind)

It links the release binary with its symbols kept (`cargo rustc --release -- -C strip=none`:
the names are the release build's own, which a profiling build's are not), runs it under
callgrind serving the fixture four times (stdio and `serve --http`, with no calls and with 1,000
`use_tool` echo calls and twenty 1 MB results), and orders the functions by what they ran:
first those whose cost grew with the calls (hottest first), then the rest that start-up ran.
Functions of shared libraries (glibc's memcpy, malloc) are not toolshelf's to place. Then it
links the release binary again as `cargo build --release` does, with LLD's map, and counts the
names of the file that link placed: all of them, unless the build's names are not the ones the
file was written from. Beside the order it writes benches/hot_code.toolchain: the compiler and
the Cargo.lock the names come from, which tests/it/hot_code.rs holds the build to."""

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_runs import INITIALIZE, INITIALIZED, OPEN, over_http, over_stdio, use_tool

ROOT = Path(__file__).resolve().parent.parent
ORDER = ROOT / "benches" / "hot_code.order"
# What the order's names were made by: `tests/it/hot_code.rs` fails when the build is another's.
TOOLCHAIN = ROOT / "benches" / "hot_code.toolchain"
CALLS, LARGE = 1000, 20


def main():
    run(["cargo", "build", "--release", "--quiet", "--bin", "toolshelf-fixture"])
    run(["cargo", "rustc", "--release", "--quiet", "--bin", "toolshelf", "--", "-C", "strip=none"])
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        binary = work / "toolshelf"
        binary.write_bytes((ROOT / "target/release/toolshelf").read_bytes())
        binary.chmod(0o755)
        config = work / "config.json"
        fixture = ROOT / "target/release/toolshelf-fixture"
        config.write_text(json.dumps({"toolboxes": {"bench": {"mcpServers": {
            "fx": {"command": str(fixture), "idleTimeout": 0}}}}}))
        costs = {}
        serve = [str(binary), "serve", "--config", str(config), "--no-cache"]
        runs = [lambda steps, out: over_stdio(serve, [INITIALIZE, INITIALIZED] + steps, out,
                                              "--demangle=no"),
                lambda steps, out: over_http(lambda address: serve + ["--http", address],
                                             [INITIALIZED] + steps, out, "--demangle=no")]
        for under_callgrind in runs:
            idle = self_costs(under_callgrind(session(0), work / "idle.out"))
            busy = self_costs(under_callgrind(session(CALLS), work / "busy.out"))
            for name, cost in busy.items():
                grown = cost - idle.get(name, 0)
                costs[name] = max(costs.get(name, 0), grown if grown > 0 else 0)
            for name in idle:
                costs.setdefault(name, 0)
        defined = defined_functions(binary)
        hot = sorted((n for n, c in costs.items() if c > 0 and n in defined), key=lambda n: -costs[n])
        start = sorted(n for n, c in costs.items() if c == 0 and n in defined)
        ORDER.write_text("".join(name + "\n" for name in hot + start))
        TOOLCHAIN.write_text(toolchain())
        print(f"{ORDER.relative_to(ROOT)}: {len(hot)} functions that serve calls, "
              f"{len(start)} of start-up", file=sys.stderr)
        linked = work / "toolshelf.map"
        run(["cargo", "build", "--release", "--quiet", "--bin", "toolshelf"],
            TOOLSHELF_LINK_MAP=str(linked))
        # A function LLVM marks cold sits in `.text.unlikely.NAME`; the order places it all the same.
        sections = re.findall(r"\(\.text\.(?:unlikely\.|startup\.)?([^)\s]+)\)",
                              linked.read_text(errors="replace"))
        placed = set(sections)
        found = sum(name in placed for name in hot + start)
        print(f"the release link placed {found} of its {len(hot) + len(start)} names",
              file=sys.stderr)


def toolchain():
    """The compiler and the dependencies the names come from: a symbol's hash changes with either
    (and with toolshelf's version, which Cargo.lock holds)."""
    verbose = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    commit = next(line for line in verbose.splitlines() if line.startswith("commit-hash: "))
    lock = hashlib.sha256((ROOT / "Cargo.lock").read_bytes()).hexdigest()
    return f"rustc {commit}\nCargo.lock sha256: {lock}\n"


def run(command, **env):
    subprocess.run(command, cwd=ROOT, check=True, env={**os.environ, **env})


def session(count):
    """The requests of one session after `initialize`: open the toolbox, `count` echo calls and,
    with calls, LARGE 1 MB results."""
    steps = [OPEN] + [use_tool(10 + i, "echo", {"message": "hi"}) for i in range(count)]
    large = LARGE if count else 0
    return steps + [use_tool(100_000 + i, "big", {"bytes": 1_000_000}) for i in range(large)]


def self_costs(path):
    """Instructions each function ran itself, from a callgrind file (names compressed)."""
    names, costs, current, after_call = {}, {}, None, False
    for line in open(path, errors="replace"):
        if line.startswith(("fn=", "cfn=")):
            match = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line.strip())
            if match and match[2]:
                names[match[1]] = match[2]
            if line.startswith("fn="):
                current = names.get(match[1]) if match else None
        elif line.startswith("calls="):
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            fields = line.split()
            if after_call:
                after_call = False  # the inclusive cost of the call before it
            elif current and len(fields) > 1 and fields[1].isdigit():
                costs[current] = costs.get(current, 0) + int(fields[1])
    return costs


def defined_functions(binary):
    listing = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True,
                             text=True, check=True).stdout
    return {fields[2] for fields in map(str.split, listing.splitlines())
            if len(fields) == 3 and fields[1] in "tTwW"}


if __name__ == "__main__":
    main()
