#!/usr/bin/env python3
"""Prints the figures of docs/schemes/mice-elephant.md from the folder that
`t2sim compare --scenario scenarios/mice_elephant.toml --out DIR` (or a sweep point run with
`t2sim --scenario ... --out DIR`) wrote: one row per scheme folder in DIR.

Per scheme, from its own flows.csv, links.csv and the comparison's compare.csv:
- mice FCT: mean and 99th percentile (nearest rank) in microseconds of the 7.7 KB flows;
- elephants: mean throughput (size / FCT) of the three 2 MB flows into host 12, Gb/s;
- victims: the throughput of each flow that does not go to host 12 (3 -> 15, 7 -> 11);
- hotspot util.: frame bytes leaf 3 sent to host 12 (switch3 port 0) over the time from 0 to
  the last ACK of a flow into host 12, as a share of 10 Gb/s (frame bytes without preamble
  and gap, so a saturated link shows about 98% with 1,078-byte frames);
- pauses, CNMs, drops: PFC frames sent by the switches, frames recirculated (each one a CNM
  on its way back: the copy goes round the recirculation port once), frames dropped.

Usage: scripts/reproduce/mice_elephant_figures.py DIR
"""

import csv
import os
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

HOTSPOT = 12
LINK_BPS = 10e9


def figures(folder):
    """The figures of one scheme's run folder (flows.csv, links.csv), as numbers."""
    flows = list(csv.DictReader(open(os.path.join(folder, "flows.csv"))))
    mice = [float(f["fct_ns"]) / 1000 for f in flows if int(f["size_bytes"]) < 10000 and f["fct_ns"]]
    eleph = [float(f["throughput_gbps"]) for f in flows
             if int(f["size_bytes"]) >= 10000 and int(f["dst"]) == HOTSPOT and f["fct_ns"]]
    victims = [(f["src"], f["dst"], float(f["throughput_gbps"]) if f["throughput_gbps"] else None)
               for f in flows if int(f["dst"]) != HOTSPOT]
    last = max(float(f["finish_ns"]) for f in flows if int(f["dst"]) == HOTSPOT and f["finish_ns"])
    links = {(l["node"], l["port"]): int(l["bytes"]) for l in csv.DictReader(open(os.path.join(folder, "links.csv")))}
    return {
        "mice_mean_us": sum(mice) / len(mice),
        "mice_p99_us": common.nearest_rank(sorted(mice), 99),
        "elephant_gbps": sum(eleph) / len(eleph),
        "victims": victims,
        "hotspot_util": links[("switch3", "0")] * 8 / (last * 1e-9) / LINK_BPS,
    }


def row(folder, scheme, compare):
    f = figures(folder)
    c = compare.get(scheme, {})
    v = " ".join(f"{s}->{d} {g:.2f}" for s, d, g in f["victims"])
    print(f"| {scheme} | {f['mice_mean_us']:.1f} | {f['mice_p99_us']:.1f} | {f['elephant_gbps']:.2f} "
          f"| {v} | {100 * f['hotspot_util']:.1f}% | {c.get('pause_frames', '-')} | {c.get('recirculated', '-')} "
          f"| {c.get('drops', '-')} |")


def main():
    p = common.parser(__doc__)
    p.add_argument("dir", metavar="DIR",
                   help="the --out folder of `t2sim compare --scenario scenarios/mice_elephant.toml`"
                        " (a row per scheme folder in it, with its compare.csv when there is "
                        "one), or one run's folder (a row of its own)")
    out = p.parse_args().dir
    if not os.path.isdir(out):
        p.error(f"{out}: no such folder")
    compare = {}
    path = os.path.join(out, "compare.csv")
    if os.path.exists(path):
        compare = {r["scheme"]: r for r in csv.DictReader(open(path))}
    print("| scheme | mice FCT mean us | mice FCT p99 us | elephant Gb/s | victims Gb/s "
          "| hotspot util. | PFC frames | CNMs | drops |")
    print("|---|---|---|---|---|---|---|---|---|")
    names = sorted(compare) if compare else []
    for name in names or sorted(os.listdir(out)):
        folder = os.path.join(out, name)
        if os.path.exists(os.path.join(folder, "flows.csv")):
            row(folder, name, compare)
    if not names and os.path.exists(os.path.join(out, "flows.csv")):
        row(out, os.path.basename(out.rstrip("/")), compare)


if __name__ == "__main__":
    main()
