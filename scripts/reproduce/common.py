"""Shared by scripts/reproduce/<scheme>: run t2sim from the committed scenario files, read
its outputs, and write a table between marker comments in a doc.

A table sits between `<!-- reproduce:NAME begin -->` and `<!-- reproduce:NAME end -->`; the
script replaces everything between the markers with the command that made it, the commit it
ran on (`git rev-parse --short HEAD`, `+dirty` when the work tree differs) and the table, so a
second run on the same commit leaves the doc byte for byte as it was (the runs are
deterministic: same file, same seed, same figures).
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T2SIM = os.path.join(ROOT, "target", "release", "t2sim")


def fail(message):
    """Ends the script with `message` on one line of standard error and exit status 2, as
    argparse ends on a bad command line: nothing has been run."""
    print(f"{os.path.basename(sys.argv[0])}: error: {message}", file=sys.stderr)
    sys.exit(2)


def parser(doc):
    """The command line of a script here: `--help` prints `doc` (its docstring) as written
    and each flag's meaning; a flag must be spelled out (`--quic` is not `--quick`), and an
    unknown flag or an argument the script does not take ends it with exit status 2 before
    anything runs."""
    return argparse.ArgumentParser(description=doc, allow_abbrev=False,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


NOT_A_CHECKOUT = "run the script from scripts/reproduce/ of a t2sim git checkout"


def git(*args):
    """The standard output of `git ARGS` in the repository; ends the script (`fail`) when git
    is missing or fails, e.g. when this copy of the scripts is not in a git checkout."""
    try:
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    except OSError as e:
        fail(f"cannot run git ({e.strerror}), which stamps each table with its commit: "
             + NOT_A_CHECKOUT)
    if r.returncode != 0:
        why = next((line.strip() for line in r.stderr.splitlines() if line.strip()),
                   f"exit status {r.returncode}")
        fail(f"`git {' '.join(args)}` failed in {ROOT} ({why}): {NOT_A_CHECKOUT}")
    return r.stdout


def checkout():
    """Ends the script (`fail`) unless ROOT, the folder above scripts/, is the top of a git
    checkout of t2sim (its Cargo.toml builds the package t2sim): a copy of the scripts
    elsewhere, even inside another repository, has no commit to stamp and no t2sim to
    build."""
    top = git("rev-parse", "--show-toplevel").strip()
    if os.path.realpath(top) != os.path.realpath(ROOT):
        fail(f"{ROOT} is inside the git checkout {top}, not the top of one: {NOT_A_CHECKOUT}")
    import tomllib
    try:
        with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
            package = tomllib.load(f).get("package", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError):
        package = None
    if package != "t2sim":
        fail(f"{ROOT}/Cargo.toml does not build the package t2sim: {NOT_A_CHECKOUT}")


def commit():
    head = git("rev-parse", "--short", "HEAD").strip()
    # Docs are what the scripts write, so they do not count as a dirty tree.
    dirty = git("status", "--porcelain", "--", ".", ":!docs").strip()
    return head + ("+dirty" if dirty else "")


def build():
    """Checks that this is a git checkout (`checkout`), then builds t2sim and notes the
    commit it was built from (the one the tables name)."""
    global STARTED_ON
    checkout()
    STARTED_ON = commit()
    subprocess.run(["nice", "-n", "10", "cargo", "build", "--release", "--quiet"], cwd=ROOT,
                   check=True)


STARTED_ON = None


def t2sim(args):
    """Runs t2sim with `args` (paths relative to the repository root); fails loudly."""
    r = subprocess.run([T2SIM] + args, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("t2sim " + " ".join(args) + " failed:\n" + r.stderr)
    return r.stdout


def summary(dir_):
    with open(os.path.join(ROOT, dir_, "summary.json")) as f:
        return json.load(f)


def csv_rows(path):
    import csv
    with open(os.path.join(ROOT, path)) as f:
        return list(csv.DictReader(f))


def nearest_rank(sorted_values, p):
    """The `p`-th percentile of sorted values by the nearest-rank method, as t2sim's metrics
    (testbench/src/metrics.rs `percentile`)."""
    import math
    return sorted_values[max(1, math.ceil(p / 100 * len(sorted_values))) - 1]


# t(0.975, df) for the Student-t 95% interval, df = 1..9, as src/study/stats.rs.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval(values, digits=2):
    """`mean +- half-width` of the Student-t 95% interval over `values` (one per seed), as
    src/study/stats.rs computes it; the mean alone for a single value."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return f"{mean:.{digits}f}"
    s = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    return f"{mean:.{digits}f} +- {T975[n - 1] * s / n ** 0.5:.{digits}f}"


def replace_block(doc, name, commands, table):
    """Writes `table` (a list of lines) under `commands` between the markers `name` in
    `doc`; fails when the markers are missing."""
    path = os.path.join(ROOT, doc)
    with open(path) as f:
        text = f.read()
    begin, end = f"<!-- reproduce:{name} begin -->", f"<!-- reproduce:{name} end -->"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        sys.exit(f"{doc}: no markers {begin} ... {end}")
    script = " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])
    body = [begin, "",
            f"Regenerated by `{script}` on commit `{STARTED_ON}` from:", "", "```"]
    body += commands
    body += ["```", ""] + table + ["", end]
    text = pattern.sub(lambda _: "\n".join(body), text)
    with open(path, "w") as f:
        f.write(text)


def cell(v, digits=2):
    """A CSV field as a number with `digits` decimals, `-` when it is empty."""
    return "-" if v in ("", None) else f"{float(v):.{digits}f}"


def scenario_variant(path, out, edits, absolute_cdf=False):
    """Writes the scenario `path` (relative to the root) with each (old, new) text edit
    applied, each of which must match exactly once, to `out`/scenario.toml and returns that
    path. With `absolute_cdf`, the workload's `cdf = "../data/...` paths name the
    checkout's data/ in full, since the copy no longer sits in scenarios/."""
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    for old, new in edits:
        if text.count(old) != 1:
            sys.exit(f"{path}: expected `{old.strip()}` once")
        text = text.replace(old, new)
    if absolute_cdf:
        text = text.replace('cdf = "../data/', f'cdf = "{ROOT}/data/')
    os.makedirs(os.path.join(ROOT, out), exist_ok=True)
    dest = f"{out}/scenario.toml"
    with open(os.path.join(ROOT, dest), "w") as f:
        f.write(text)
    return dest


def thousands(n):
    return f"{n:,}"


def figure(svg, name, caption):
    """Copies a plot t2sim wrote (`svg`, relative to the root) to docs/schemes/figures/
    `name`.svg and returns the Markdown line that shows it in a page of docs/schemes/."""
    import shutil
    dest = os.path.join(ROOT, "docs", "schemes", "figures")
    os.makedirs(dest, exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, svg), os.path.join(dest, name + ".svg"))
    return f"![{caption}](figures/{name}.svg)"
