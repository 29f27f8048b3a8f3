#!/usr/bin/env python3
"""Writes scenarios/mice_elephant_inter_rack.toml: the Mice/Elephant paper's inter-rack setup
(the paper's §6) as far as our copy of the paper gives it.

- "144 nodes leaf-spine": 9 leaves x 16 hosts, as pFabric's layout (an inference: the copy
  names no counts). pFabric's four 40 Gb/s uplinks a leaf are 16 spines here, since every link
  of a scenario has one speed: the same capacity, non-blocking. 10 Gb/s links of 1 us, the
  hotspot scenario's.
- "Two servers per rank send queries to 7 other servers in different ranks periodically
  (1ms)": hosts 0 and 8 of every leaf query; a query from leaf r goes to the host in the same
  slot of leaves r+1 .. r+7 (mod 9), and each answers 7.7 KB. The query itself (a small
  request) is not modelled, as in the hotspot scenario. Rounds at 10 us, 1,010 us, ... for
  `ROUNDS` ms.
- "the query servers also receive long-lived traffic from inter-rank servers": one long flow
  into every query server from the next leaf, from slot 4 into slot 0 and from slot 12 into
  slot 8 (one sender each, so the querier's own link is the one the long flow fills).
- "other long-lived flows have random endpoints; number of concurrent flows is quite small
  (about 2)": 18 more long flows between hosts that neither query nor answer, endpoints on
  different leaves, drawn by Python's `random.Random(SEED)`.
Long flows are `LONG_BYTES`, enough to outlast the queries at 10 Gb/s.

Usage: scripts/reproduce/mice_elephant_inter_rack.py   (no arguments but --help; rewrites
the file, the same file every time)
"""

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import common  # noqa: E402
except ModuleNotFoundError as e:
    if e.name != "common":
        raise
    # A copy out of scripts/reproduce/: no common.py beside it, no checkout around it.
    print(f"{os.path.basename(sys.argv[0])}: error: no {e.name}.py in {HERE}: run the script "
          "from scripts/reproduce/ of a t2sim git checkout", file=sys.stderr)
    sys.exit(2)

OUT = os.path.join(common.ROOT, "scenarios", "mice_elephant_inter_rack.toml")
LEAVES, HOSTS, SPINES = 9, 16, 16
QUERY_SLOTS = (0, 8)
# The long flow into querier slot QUERY_SLOTS[i] comes from slot LONG_SLOTS[i] of the next leaf.
LONG_SLOTS = (4, 12)
ROUNDS = 5
MICE_BYTES = 7700
LONG_BYTES = 8_000_000
SEED = 1


def host(leaf, slot):
    return leaf * HOSTS + slot


def flows():
    out = []
    for leaf in range(LEAVES):
        for q, sender in zip(QUERY_SLOTS, LONG_SLOTS):
            out.append((host((leaf + 1) % LEAVES, sender), host(leaf, q), LONG_BYTES, 0))
    busy = {host(l, s) for l in range(LEAVES) for s in QUERY_SLOTS + LONG_SLOTS}
    free = [h for h in range(LEAVES * HOSTS) if h not in busy]
    rng = random.Random(SEED)
    for _ in range(2 * LEAVES):
        while True:
            src, dst = rng.sample(free, 2)
            if src // HOSTS != dst // HOSTS:
                break
        out.append((src, dst, LONG_BYTES, 0))
    for r in range(ROUNDS):
        start = 10_000 + r * 1_000_000
        for leaf in range(LEAVES):
            for q in QUERY_SLOTS:
                for k in range(1, 8):
                    out.append((host((leaf + k) % LEAVES, q), host(leaf, q), MICE_BYTES, start))
    return out


def main():
    common.parser(__doc__).parse_args()
    if not os.path.isdir(os.path.dirname(OUT)):
        common.fail(f"no folder {os.path.dirname(OUT)} to write {os.path.basename(OUT)} in: "
                    + common.NOT_A_CHECKOUT)
    lines = [
        "# Written by scripts/reproduce/mice_elephant_inter_rack.py (its docstring says what each part",
        "# stands for): the Mice/Elephant paper's inter-rack setup (§6, E4), 144 hosts on 9",
        "# leaves x 16 spines, 10 Gb/s; 18 query servers each answered by 7 hosts on other leaves",
        f"# with {MICE_BYTES} B every 1 ms for {ROUNDS} ms, a long flow into each query server and",
        "# 18 long flows between random other hosts.",
        "#   t2sim compare --scenario scenarios/mice_elephant_inter_rack.toml",
        'name = "mice-elephant inter-rack: 144 hosts, 18 query servers, long-lived flows, 10G"',
        "seed = 1",
        f"duration_us = {ROUNDS * 1000}",
        "drain_us = 20000",
        'scheme = "mice-elephant"',
        "",
        "[topology]",
        'kind = "leaf_spine"',
        f"leaves = {LEAVES}",
        f"spines = {SPINES}",
        f"hosts_per_leaf = {HOSTS}",
        "link_gbps = 10",
        "link_delay_ns = 1000",
        "",
        "[transport]",
        "mss = 1000",
        "window_bytes = 64000",
        "rto_us = 1000",
        "",
        "[output]",
        "buckets = [10000]",
        "queue_sample_ns = 10000",
        "",
        "[compare]",
        'schemes = ["mice-elephant", "pfc-qcn", "pfc-only", "qcn-only"]',
    ]
    for src, dst, size, start in flows():
        lines += ["", "[[workload.flows]]", f"src = {src}", f"dst = {dst}",
                  f"size_bytes = {size}", f"start_ns = {start}"]
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
