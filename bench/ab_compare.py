#!/usr/bin/env python3
"""Two builds of tensorbench in one sitting, interleaved workload by workload.

On a shared machine the speed drifts by tens of percent within minutes, so two full runs one
after the other can differ by more than any change between the builds. This runs each workload
with build A, then B (then B, then A in the next round, and so on), each time with the openblas,
auto and reference rows, and reports per workload the median over rounds of each build's
openblas/reference and auto/reference ratios, and of B's medians over A's.

    python3 bench/ab_compare.py OLD_TENSORBENCH NEW_TENSORBENCH [--rounds 4] [--budget 0.5]
            [--suite full] [--workload NAME]... [--json OUT.json] [--markdown OUT.md]

Each build gets a cache folder of its own (TENSORENGINE_CACHE_DIR), empty unless given, so both
plan with their default profiles unless calibrated there first.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def workloads(binary, suite):
    listing = subprocess.run([binary, "--list"], capture_output=True, text=True, check=True).stdout
    names = []
    for line in listing.splitlines():
        parts = line.split()
        if not parts or parts[0] in ("workload", "name") or set(parts[0]) <= set("-"):
            continue
        if suite == "quick" and "quick" not in line:
            continue
        names.append(parts[0])
    return names


def run(binary, workload, budget, cache):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        path = handle.name
    environment = dict(os.environ, TENSORENGINE_CACHE_DIR=cache)
    command = [binary, "--workload", workload, "--backend", "openblas", "--backend", "auto", "--backend", "reference",
               "--budget", str(budget), "--json", path]
    subprocess.run(command, capture_output=True, text=True, env=environment, check=True)
    with open(path) as handle:
        report = json.load(handle)
    os.unlink(path)
    return {row["backend"]: row["median_seconds"] for row in report["rows"] if row.get("median_seconds")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--budget", type=float, default=0.5)
    parser.add_argument("--suite", choices=["quick", "full"], default="full")
    parser.add_argument("--old-cache", default=tempfile.mkdtemp(prefix="ab-old-"))
    parser.add_argument("--new-cache", default=tempfile.mkdtemp(prefix="ab-new-"))
    parser.add_argument("--workload", action="append", help="only this workload (repeatable)")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    options = parser.parse_args()

    names = options.workload or workloads(options.new, options.suite)
    samples = {name: {"old": [], "new": []} for name in names}
    for round_index in range(options.rounds):
        order = [("old", options.old, options.old_cache), ("new", options.new, options.new_cache)]
        if round_index % 2:
            order.reverse()
        for name in names:
            for label, binary, cache in order:
                samples[name][label].append(run(binary, name, options.budget, cache))
        print(f"round {round_index + 1} of {options.rounds} done", file=sys.stderr)

    def median_of(name, label, backend):
        values = [s[backend] for s in samples[name][label] if backend in s]
        return statistics.median(values) if values else None

    def ratio_of(name, label, backend):
        values = [s[backend] / s["reference"] for s in samples[name][label] if backend in s and "reference" in s]
        return statistics.median(values) if values else None

    lines = [
        "| workload | openblas ×ref A | openblas ×ref B | auto ×ref A | auto ×ref B | openblas B/A | auto B/A |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    results = []
    for name in names:
        entry = {"workload": name}
        for label in ("old", "new"):
            for backend in ("openblas", "auto", "reference"):
                entry[f"{label}_{backend}_median_seconds"] = median_of(name, label, backend)
            for backend in ("openblas", "auto"):
                entry[f"{label}_{backend}_reference_ratio"] = ratio_of(name, label, backend)
        # B/A per round (same round, seconds apart), then the median over rounds.
        for backend in ("openblas", "auto"):
            pairs = [n[backend] / o[backend] for o, n in zip(samples[name]["old"], samples[name]["new"])
                     if backend in o and backend in n]
            entry[f"{backend}_new_over_old"] = statistics.median(pairs) if pairs else None
        results.append(entry)

        def cell(value):
            return "—" if value is None else f"{value:.2f}×"
        lines.append(f"| {name} | {cell(entry['old_openblas_reference_ratio'])} | {cell(entry['new_openblas_reference_ratio'])} | "
                     f"{cell(entry['old_auto_reference_ratio'])} | {cell(entry['new_auto_reference_ratio'])} | "
                     f"{cell(entry['openblas_new_over_old'])} | {cell(entry['auto_new_over_old'])} |")
    table = "\n".join(lines)
    print(table)
    if options.markdown:
        with open(options.markdown, "w") as handle:
            handle.write(table + "\n")
    if options.json:
        with open(options.json, "w") as handle:
            json.dump({"old": options.old, "new": options.new, "rounds": options.rounds, "budget": options.budget,
                       "workloads": results}, handle, indent=2)


if __name__ == "__main__":
    main()
