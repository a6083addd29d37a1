#!/usr/bin/env python3
"""The metrics PERF.md compares, from Nsight Compute's raw CSV
(`ncu --csv --page raw` with the SpeedOfLight, WarpStateStats,
InstructionStats, ComputeWorkloadAnalysis and LaunchStats sections).

    ncu_summary.py TAG=FILE.csv ... [--json OUT.json]

Prints one row per profiled kernel (a file may hold several, and other text
around the table), and with --json writes {tag: [{metric: value}]}.
"""
import argparse
import csv
import json

METRICS = {
    "time": "gpu__time_duration.sum",
    "grid": "launch__grid_size",
    "threads": "launch__block_size",
    "regs": "launch__registers_per_thread",
    "smem": "launch__shared_mem_per_block_dynamic",
    "tensor %": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "xu %": "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
    "alu %": "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
    "fma %": "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
    "uniform %": "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
    "lsu %": "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "issue %": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "instructions": "smsp__inst_executed.sum",
    "shared pipe %": "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active",
    "L1 %": "l1tex__throughput.avg.pct_of_peak_sustained_active",
}
STALLS = ("barrier", "long_scoreboard", "wait", "short_scoreboard",
          "dispatch_stall", "math_pipe_throttle", "mio_throttle", "gmma",
          "lg_throttle", "not_selected")


def stall(name):
    return (f"smsp__average_warps_issue_stalled_{name}_per_issue_active"
            ".ratio")


def kernels(path):
    """The rows of the raw page's table in `path`: {metric: value}."""
    lines = open(path, errors="replace").read().splitlines()
    out = []
    header = None
    for row in csv.reader(lines):
        if row and row[0] == "ID":
            header = row
            continue
        if header and len(row) == len(header) and row[0].isdigit():
            out.append(dict(zip(header, row)))
    return out


def summary(row):
    s = {"kernel": row.get("Kernel Name", "?")[:60]}
    for k, m in METRICS.items():
        s[k] = row.get(m, "?")
    s["stalls per issue"] = {n: row.get(stall(n), "?") for n in STALLS}
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="TAG=FILE.csv")
    ap.add_argument("--json")
    args = ap.parse_args()
    result = {}
    for spec in args.files:
        tag, path = spec.split("=", 1)
        result[tag] = [summary(r) for r in kernels(path)]
        for s in result[tag]:
            print(f"{tag}: {s['kernel']}")
            print("   " + ", ".join(f"{k} {s[k]}" for k in METRICS))
            print("   stalls per issue: " + ", ".join(
                f"{n} {v}" for n, v in s["stalls per issue"].items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
