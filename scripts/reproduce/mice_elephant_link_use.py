#!/usr/bin/env python3
"""Why the hotspot link of scenarios/mice_elephant.toml runs below line rate under
isolation: measurements behind docs/schemes/mice-elephant.md, "Link utilisation".

Runs the scenario (with the release binary, default target/release/t2sim) as it is and in
variants that each take one term away, all under `mice-elephant` (isolation), seed 1:
- `as shipped`;
- `no QCN feedback`: scheme_params.sample_bytes = 10,000,000, so no port ever sends 10 MB
  and the congestion point never samples (checked: 0 CNMs);
- `no mice`: the 7.7 KB flows removed (elephants and victims only);
- `RP timer 1.5 ms`: the hosts' reaction-point timer stage at 1.5 ms instead of our 15 ms
  (`[transport.qcn] timer_us`), a probe of the cause, not a setting we adopt;
- `RP R_AI 50 Mb/s`: the active-increase step at 50 Mb/s instead of the standard's 5
  (`r_ai_mbps`), likewise a probe only.

For each, a pcapng capture of the hotspot link (leaf 3's port 0 toward host 12, what the
switch sends) gives, per time window, the link's busy fraction (frame + FCS + preamble and
gap, over the window at 10 Gb/s) and each elephant's share of it; the run's queues.csv gives
the elephant queue (queue 0) of that port. It prints:
- utilisation measured to the last flow into host 12's finish (the doc table's measure), and
  over fixed windows: [0, 2 ms], [0, first elephant done], and while all three are running;
- a timeline of 500 us windows: busy %, per-elephant Gb/s, elephant-queue mean depth.

Usage: scripts/reproduce/mice_elephant_link_use.py [T2SIM]
"""

import csv
import os
import re
import struct
import subprocess
import sys
import tempfile

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

SCENARIO = os.path.join(common.ROOT, "scenarios", "mice_elephant.toml")
HOTSPOT = 12
LINK_BPS = 10e9
WIRE_EXTRA = 4 + 20  # FCS, preamble and inter-frame gap
WINDOW_NS = 500_000


def variant(text, name):
    extra = '\npcap = "link:switch3:0"\npcap_dir = "."\n'
    text = text.replace("[output]\n", "[output]" + extra, 1)
    if name == "no QCN feedback":
        text = text.replace('scheme = "mice-elephant"\n',
                            'scheme = "mice-elephant"\n[scheme_params]\nsample_bytes = 10000000\n', 1)
    if name == "RP timer 1.5 ms":
        text = text.replace("[output]\n", "[transport.qcn]\ntimer_us = 1500\n\n[output]\n", 1)
    if name == "RP R_AI 50 Mb/s":
        text = text.replace("[output]\n", "[transport.qcn]\nr_ai_mbps = 50\n\n[output]\n", 1)
    if name == "no mice":
        blocks = text.split("[[workload.flows]]")
        keep = [b for b in blocks[1:] if "size_bytes = 7700" not in b]
        text = blocks[0] + "".join("[[workload.flows]]" + b for b in keep)
    return text


def epbs(path):
    """(interface, time ns, frame bytes) of each enhanced packet block of a pcapng file."""
    data = open(path, "rb").read()
    # The section header's byte-order magic says how the file is written.
    order = "<" if struct.unpack_from("<I", data, 8)[0] == 0x1A2B3C4D else ">"
    i = 0
    while i + 8 <= len(data):
        kind, length = struct.unpack_from(order + "II", data, i)
        if kind == 6:
            iface, hi, lo, cap, _ = struct.unpack_from(order + "IIIII", data, i + 8)
            yield iface, (hi << 32) | lo, data[i + 28:i + 28 + cap]
        i += length


def run(t2sim, name, out):
    text = open(SCENARIO).read()
    path = os.path.join(out, "scenario.toml")
    open(path, "w").write(variant(text, name))
    subprocess.run([t2sim, "run", "--scenario", path, "--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    flows = list(csv.DictReader(open(os.path.join(out, "flows.csv"))))
    summary = open(os.path.join(out, "summary.json")).read()
    cnms = int(re.search(r'"recirculated": (\d+)', summary).group(1))
    # Host n has address 10.0.0.1 + n (src/scenario/topology.rs).
    elephants = {f"10.0.{(int(f['src']) + 1) // 256}.{(int(f['src']) + 1) % 256}": f for f in flows
                 if int(f["size_bytes"]) >= 1_000_000 and int(f["dst"]) == HOTSPOT}
    frames = [(t, len(b) + WIRE_EXTRA, b) for iface, t, b in
              epbs(os.path.join(out, "link-switch3-0.pcapng")) if iface == 0]
    queue = [(int(r["time_ns"]), int(r["depth_cells"]))
             for r in csv.DictReader(open(os.path.join(out, "queues.csv")))
             if r["node"] == "switch3" and r["port"] == "0" and r["queue"] == "0"]
    return flows, elephants, frames, queue, cnms


def src_of(b):
    if len(b) >= 34 and b[12:14] == b"\x08\x00":
        return ".".join(str(x) for x in b[26:30])
    return None


def busy(frames, a, b):
    bits = sum(n for t, n, _ in frames if a < t <= b) * 8
    return bits / ((b - a) * 1e-9) / LINK_BPS


def main():
    p = common.parser(__doc__)
    p.add_argument("t2sim", metavar="T2SIM", nargs="?", default=common.T2SIM,
                   help="the t2sim binary to run (default: this checkout's release build, "
                        "target/release/t2sim)")
    t2sim = p.parse_args().t2sim
    if not os.path.isfile(SCENARIO):
        common.fail(f"no {SCENARIO}: " + common.NOT_A_CHECKOUT)
    if not (os.path.isfile(t2sim) and os.access(t2sim, os.X_OK)):
        common.fail(f"no t2sim binary at {t2sim}: build it (cargo build --release) or name one")
    for name in ["as shipped", "no QCN feedback", "no mice", "RP timer 1.5 ms",
                 "RP R_AI 50 Mb/s"]:
        with tempfile.TemporaryDirectory() as out:
            flows, elephants, frames, queue, cnms = run(t2sim, name, out)
        ends = sorted(float(f["finish_ns"]) for f in elephants.values())
        last = max(float(f["finish_ns"]) for f in flows if int(f["dst"]) == HOTSPOT)
        print(f"## {name}: {cnms} CNMs; elephants into host {HOTSPOT} end at "
              + ", ".join(f"{e / 1e6:.2f}" for e in ends) + " ms")
        print(f"utilisation to the last finish ({last / 1e6:.2f} ms): {100 * busy(frames, 0, last):.1f}%; "
              f"over [0, 2 ms]: {100 * busy(frames, 0, 2e6):.1f}%; "
              f"to the first elephant's end: {100 * busy(frames, 0, ends[0]):.1f}%")
        print("| window ms | busy % | " + " | ".join(f"{s} Gb/s" for s in sorted(elephants))
              + " | elephant queue mean cells |")
        print("|---|---|" + "---|" * len(elephants) + "---|")
        t = 0
        while t < last:
            a, b = t, t + WINDOW_NS
            rates = []
            for s in sorted(elephants):
                bits = sum(n for ft, n, fb in frames if a < ft <= b and src_of(fb) == s) * 8
                rates.append(f"{bits / (WINDOW_NS * 1e-9) / 1e9:.2f}")
            q = [d for qt, d in queue if a < qt <= b]
            qm = f"{sum(q) / len(q):.0f}" if q else "-"
            print(f"| {a / 1e6:.1f}-{b / 1e6:.1f} | {100 * busy(frames, a, b):.1f} | "
                  + " | ".join(rates) + f" | {qm} |")
            t = b
        print()


if __name__ == "__main__":
    main()
