#!/usr/bin/env python3
"""Runs scenarios/slytherin_websearch.toml under several schemes, loads, seeds and
thresholds, and prints the table of docs/schemes/slytherin.md.

Each run is the scenario file with `scheme`, `[scheme_params]`, `workload.load` and `seed`
replaced (the variant is written beside the results, with the CDF path made absolute, and
the exact t2sim command is printed), run by target/release/t2sim. Per run it reports, from
the run's own outputs:

- short p99: the 99th-percentile FCT slowdown of flows below 100 KB (nearest rank, as
  t2sim's summary), over the completed flows of all the seeds pooled;
- long FCT: the mean FCT in microseconds of flows of 1 MB and more;
- long Gb/s: their mean throughput (size / FCT);
- p99 queue: the 99th percentile, in 176-byte cells, of the depth of every switch
  front-panel port (all its queues) over the samples (every 1 us) while flows arrive
  (0 .. duration_us), empty ports included; max: the deepest sample;
- drops, timeouts, reordered: frames dropped, retransmission timeouts and segments that
  arrived out of order (displaced from their place in the flow's sequence, RFC 5236: the
  summary's `reordered_segments`), summed over the seeds; done: flows completed / flows;
- reordered share (`reordering`, for scripts/reproduce/slytherin's reordering table):
  reordered segments over the flows' data segments (each flow's size in `mss` segments),
  over the seeds pooled. Every segment out of place counts, early or late: one that
  overtakes k others counts k + 1, where RFC 4737 would count the k it overtook.

Usage: scripts/reproduce/slytherin_sweep.py --out DIR [--schemes a,b] [--loads 0.3,0.5]
           [--seeds 7,8] [--k 384,768]   (k applies to the schemes that take k_cells)
           [--base scenarios/slytherin_incast.toml --degrees 24,32,40] [--rto-us 100]
           [--pias-thresholds t0,t1,t2,t3,t4,t5,t6]
--base picks another scenario file (default scenarios/slytherin_websearch.toml); --degrees
replaces its `degree` ([workload.incast]) in turn, and the table gets a degree column;
--rto-us sets the transport's `rto_us` (the RFC 6298 timer's initial value and floor).
--pias-thresholds gives PIAS's seven demotion thresholds in bytes (its `thresh_0_bytes` ..
`thresh_6_bytes`; without it, the web-search set). The flow sizes are the base file's `cdf`.
"""

import csv
import functools
import json
import os
import re
import subprocess
import sys
import tomllib

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

BASE = os.path.join(common.ROOT, "scenarios", "slytherin_websearch.toml")
# The t2sim binary: T2SIM_BIN, else this checkout's release build.
BIN = os.environ.get("T2SIM_BIN") or common.T2SIM
CLOCK_HZ = 1_500_000_000
SHORT = 100_000
LONG = 1_000_000
# PIAS's seven demotion thresholds in bytes (--pias-thresholds); empty: the scheme's
# defaults (the web-search set).
PIAS_THRESHOLDS = []


def variant(scheme, load, seed, k, degree=None, rto_us=None, pias_thresholds=None):
    """The base file with these settings; `pias_thresholds` (bytes) overrides
    PIAS_THRESHOLDS for this run."""
    thresholds = PIAS_THRESHOLDS if pias_thresholds is None else pias_thresholds
    text = open(BASE).read()
    if rto_us is not None:
        # The RFC 6298 timer's initial value and floor; without it the transport's default
        # (2 ms, the PIAS artifact's min_rto; docs/testbench.md).
        text, n = re.subn(r"(?m)^\[transport\]\n", f"[transport]\nrto_us = {rto_us}\n", text)
        if n != 1:
            sys.exit(f"{BASE}: --rto-us needs exactly one [transport] section, found {n}")
    if degree is not None:
        text, n = re.subn(r"(?m)^degree = .*$", f"degree = {degree}", text)
        if n != 1:
            sys.exit(f"{BASE}: --degrees needs exactly one `degree = ` line, found {n}")
    text = re.sub(r'(?m)^scheme = ".*"$', f'scheme = "{scheme}"', text)
    text = re.sub(r"(?m)^seed = .*$", f"seed = {seed}", text)
    text = re.sub(r"(?m)^load = .*$", f"load = {load}", text)
    # The base file's CDF, its path made absolute (it is relative to the base file).
    cdfs = re.findall(r'(?m)^cdf = "(.*)"$', text)
    if len(cdfs) != 1:
        sys.exit(f"{BASE}: needs exactly one `cdf = ` line, found {len(cdfs)}")
    cdf = os.path.normpath(os.path.join(os.path.dirname(BASE), cdfs[0]))
    text = re.sub(r'(?m)^cdf = ".*"$', f'cdf = "{cdf}"', text)
    # [scheme_params]: k_cells for the schemes that have it, none for the others; PIAS's
    # demotion thresholds when given.
    params = f"[scheme_params]\nk_cells = {k}\n" if k is not None else ""
    if scheme == "pias" and thresholds:
        params += "".join(f"thresh_{i}_bytes = {t}\n" for i, t in enumerate(thresholds))
    params += "\n" if params else ""
    text = re.sub(r"(?ms)^\[scheme_params\]\n.*?\n\n", params, text)
    return text


def nearest_rank(values, p):
    """The `p`-th percentile (p <= 100) of `values`, sorted here, by the nearest-rank method
    (common.nearest_rank); None for no values."""
    return common.nearest_rank(sorted(values), p) if values else None


def run(out, scheme, load, seed, k, degree=None, rto_us=None, threads=None, pias_thresholds=None):
    tag = f"{scheme}_load{load}_seed{seed}" + (f"_k{k}" if k is not None else "")
    tag += f"_deg{degree}" if degree is not None else ""
    tag += f"_rto{rto_us}" if rto_us is not None else ""
    d = os.path.join(out, tag)
    os.makedirs(d, exist_ok=True)
    toml = os.path.join(d, "scenario.toml")
    with open(toml, "w") as f:
        f.write(variant(scheme, load, seed, k, degree, rto_us, pias_thresholds))
    cmd = [BIN, "run", "--scenario", toml, "--out", d]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    print(" ".join(cmd), file=sys.stderr, flush=True)
    if not os.path.exists(os.path.join(d, "summary.json")):
        try:
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        except OSError as e:
            common.fail(f"cannot run the t2sim binary {BIN} ({e.strerror}): build it "
                        "(cargo build --release) or name one with T2SIM_BIN")
    return d


@functools.lru_cache(maxsize=None)
def one_run(d):
    """The summary and the flows of the run in folder `d`, read once however many tables
    show it."""
    summary = json.load(open(os.path.join(d, "summary.json")))
    with open(os.path.join(d, "scenario.toml"), "rb") as f:
        mss = tomllib.load(f)["transport"]["mss"]
    r = {"short": [], "long_fct": [], "long_gbps": [], "segments": 0, "summary": summary}
    for row in csv.DictReader(open(os.path.join(d, "flows.csv"))):
        size = int(row["size_bytes"])
        # Every flow's data segments, finished or not (the transport's cut: metrics.rs).
        r["segments"] += max(1, -(-size // mss))
        if not row["fct_cycles"]:
            continue
        if size < SHORT:
            r["short"].append(float(row["slowdown"]))
        elif size >= LONG:
            r["long_fct"].append(int(row["fct_cycles"]) / CLOCK_HZ * 1e6)
            r["long_gbps"].append(float(row["throughput_gbps"]))
    return r


# A table row reads its seeds pooled and then one by one, so the last rows' samples are
# kept; a 400-host run has about 600,000.
@functools.lru_cache(maxsize=16)
def queue_depths(d):
    """Every switch front-panel port's depth (all its queues, cells) at every sample while
    flows arrive, empty ports included, of the run in folder `d`."""
    summary = one_run(d)["summary"]
    ports = [
        (row["node"], row["port"])
        for row in csv.DictReader(open(os.path.join(d, "links.csv")))
        if row["node"].startswith("switch")
    ]
    window_ns = summary["duration_cycles"] * 1_000_000_000 // CLOCK_HZ
    period = summary["queue_sample_ns"]
    depth = {}
    for row in csv.DictReader(open(os.path.join(d, "queues.csv"))):
        t = int(row["time_ns"])
        if t <= window_ns:
            key = (t, row["node"], row["port"])
            depth[key] = depth.get(key, 0) + int(row["depth_cells"])
    return [depth.get((t, node, port), 0)
            for t in range(0, window_ns + 1, period) for node, port in ports]


def reordering(dirs):
    """Segments reordered, the flows' data segments (each flow's own, once: the reorder count
    ignores duplicates), retransmissions and drops, summed over the runs in `dirs`."""
    runs = [one_run(d) for d in dirs]
    reordered = sum(r["summary"]["reordered_segments"] for r in runs)
    segments = sum(r["segments"] for r in runs)
    return {"reordered": reordered, "segments": segments,
            "retransmitted": sum(r["summary"]["retransmitted_segments"] for r in runs),
            "reordered_share": reordered / segments if segments else float("nan"),
            "drops": sum(dropped(r["summary"]) for r in runs)}


def dropped(summary):
    """Frames the run dropped, over every reason."""
    d = summary["drops"]
    return sum(d.values()) if isinstance(d, dict) else d


def measure(dirs):
    runs = [one_run(d) for d in dirs]
    short = [v for r in runs for v in r["short"]]
    long_fct = [v for r in runs for v in r["long_fct"]]
    long_gbps = [v for r in runs for v in r["long_gbps"]]
    depths = [v for d in dirs for v in queue_depths(d)]
    summaries = [r["summary"] for r in runs]

    def total(key):
        return sum(s[key] for s in summaries)

    mean = lambda v: sum(v) / len(v) if v else float("nan")
    return {
        "short_n": len(short),
        "short_p99": nearest_rank(short, 99),
        "long_n": len(long_fct),
        "long_fct_us": mean(long_fct),
        "long_gbps": mean(long_gbps),
        "q_p99": nearest_rank(depths, 99),
        "q_max": max(depths) if depths else None,
        "drops": sum(dropped(s) for s in summaries),
        "timeouts": total("timeouts"),
        "reordered": total("reordered_segments"),
        "done": f"{total('completed')}/{total('flows')}",
        "offered": mean([s["offered_load"] for s in summaries]),
    }


def main():
    global BASE, PIAS_THRESHOLDS
    a = common.parser(__doc__)
    a.add_argument("--out", required=True, metavar="DIR",
                   help="the folder of the runs, one subfolder each (a run whose subfolder "
                        "already holds a summary.json is not run again)")
    a.add_argument("--schemes", default="slytherin,dctcp,droptail",
                   help="comma-separated schemes (default %(default)s)")
    a.add_argument("--loads", default="0.3,0.5,0.7",
                   help="comma-separated workload loads (default %(default)s)")
    a.add_argument("--seeds", default="7",
                   help="comma-separated seeds, pooled in each row (default %(default)s)")
    a.add_argument("--k", default="768",
                   help="comma-separated k_cells, for the schemes that take it (all but "
                        "droptail; default %(default)s)")
    a.add_argument("--base", default=BASE, metavar="SCENARIO",
                   help="the scenario file to vary (default "
                        "scenarios/slytherin_websearch.toml)")
    a.add_argument("--degrees", default=None,
                   help="comma-separated incast degrees, each replacing the base file's "
                        "`degree` in turn, with a degree column in the table")
    a.add_argument("--rto-us", type=int, default=None, metavar="US",
                   help="the transport's rto_us: the RFC 6298 timer's initial value and floor "
                        "(default: the transport's own, 2 ms)")
    a.add_argument("--pias-thresholds", default=None, metavar="T0,...,T6",
                   help="PIAS's seven demotion thresholds in bytes, its thresh_0_bytes .. "
                        "thresh_6_bytes (default: the scheme's web-search set)")
    args = a.parse_args()
    if not os.path.isfile(args.base):
        if args.base == BASE:
            common.fail(f"no {BASE}: " + common.NOT_A_CHECKOUT)
        a.error(f"--base {args.base}: no such file")
    # The lists of whole numbers, checked here so that a typo is a usage error (exit 2), not a
    # traceback part way through the runs; --degrees and --pias-thresholds may be empty.
    for flag, value in [("--seeds", args.seeds), ("--k", args.k),
                        ("--degrees", args.degrees or "0"),
                        ("--pias-thresholds", args.pias_thresholds or "0")]:
        try:
            [int(v) for v in value.split(",")]
        except ValueError:
            a.error(f"{flag} {value}: expected whole numbers separated by commas")
    if args.pias_thresholds:
        PIAS_THRESHOLDS = [int(t) for t in args.pias_thresholds.split(",")]
    BASE = os.path.abspath(args.base)
    seeds = [int(s) for s in args.seeds.split(",")]
    degrees = [int(d) for d in args.degrees.split(",")] if args.degrees else [None]
    first = "| incast degree " if args.degrees else ""
    print(first + "| scheme | K cells | load | offered | flows done | short flows | p99 short slowdown "
          "| long flows | mean long FCT (us) | mean long Gb/s | p99 queue (cells) | max queue | drops "
          "| timeouts | reordered |")
    print(("|---" if args.degrees else "") + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for degree in degrees:
        for load in args.loads.split(","):
            for scheme in args.schemes.split(","):
                ks = [int(k) for k in args.k.split(",")] if scheme != "droptail" else [None]
                for k in ks:
                    dirs = [run(args.out, scheme, load, s, k, degree, args.rto_us) for s in seeds]
                    m = measure(dirs)
                    print(
                        (f"| {degree} " if degree is not None else "")
                        + f"| {scheme} | {k if k is not None else '-'} | {load} | {m['offered']:.3f} "
                        f"| {m['done']} | {m['short_n']} | {m['short_p99']:.2f} | {m['long_n']} "
                        f"| {m['long_fct_us']:.0f} | {m['long_gbps']:.1f} | {m['q_p99']} "
                        f"| {m['q_max']} | {m['drops']} | {m['timeouts']} | {m['reordered']} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
