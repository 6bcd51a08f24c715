#!/usr/bin/env python3
"""Plots the JSON of `geohash-match bench hash --json-out FILE` in the manner of the thesis's
chapter 6 figures: rates vs input size, vs load factor, vs share of absent queries for every map
scheme measured, the multimap and index rates, and the coherent-hashing paper's 2D experiment
(row-major, Morton and bit-reversal orders, coherent vs random Robin Hood).

Usage: scripts/plot_hash.py hash.json [more.json ...] [-o OUTDIR]

Several JSON files (e.g. a CPU and a CUDA run) are drawn into the same figures, one colour per
file, one line style per scheme. Writes rate_vs_n.png, rate_vs_load.png, rate_vs_absent.png,
multimap.png, index.png and coherent.png to OUTDIR (default: the directory of the first JSON file).
"""
import argparse
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_hash.py: matplotlib is missing (pip install matplotlib)")

LAYOUT_STYLE = {"bucketed": "-", "thesis": "--", "sorted": ":", "linear": "-.",
                "quadratic": (0, (3, 1, 1, 1, 1, 1)), "double": (0, (5, 2)),
                "robin-hood": (0, (1, 1)), "robin-hood-random": (0, (4, 1, 1, 1)),
                "chaining": (0, (8, 2, 1, 2)),
                "two-level": (0, (2, 2, 6, 2))}


def layouts_of(rows, field="layout"):
    """The table kinds present in rows, in a stable order."""
    return sorted({r[field] for r in rows if r[field] != "sorted"},
                  key=lambda k: list(LAYOUT_STYLE).index(k) if k in LAYOUT_STYLE else 99)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_hash.py: {path}: {e}")
    if data.get("benchmark") != "hash":
        sys.exit(f"plot_hash.py: {path}: not the output of 'geohash-match bench hash'")
    return data


def label_of(data):
    return f"{data['backend']} ({data['device']})"


def mrate(x):
    return x / 1e6


def save(fig, outdir, name):
    path = os.path.join(outdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(path)


def plot_rate_vs_n(runs, outdir, load=0.8):
    """Insert and find rates vs N at one load, with the sorted baseline (thesis fig. 6.3/6.4)."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharex=True)
    titles = ["insert / build", "find (present keys)", "find (absent keys)"]
    fields = [("insert_keys_per_s", "build_keys_per_s"),
              ("find_present_keys_per_s", "find_present_keys_per_s"),
              ("find_absent_keys_per_s", "find_absent_keys_per_s")]
    for ci, data in enumerate(runs):
        colour = f"C{ci}"
        for ax, (map_field, sorted_field) in zip(axes, fields):
            for layout in layouts_of(data["map"]):
                rows = sorted((r for r in data["map"] if r["layout"] == layout
                               and abs(r["load"] - load) < 1e-9 and not r["failed"]),
                              key=lambda r: r["n"])
                if rows:
                    ax.plot([r["n"] for r in rows], [mrate(r[map_field]) for r in rows],
                            LAYOUT_STYLE[layout], color=colour, marker="o", markersize=3,
                            label=f"{layout} ({data['backend']})")
            rows = sorted(data["sorted"], key=lambda r: r["n"])
            ax.plot([r["n"] for r in rows], [mrate(r[sorted_field]) for r in rows],
                    LAYOUT_STYLE["sorted"], color=colour, marker="s", markersize=3,
                    label=f"sort + binary search ({data['backend']})")
    for ax, title in zip(axes, titles):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("keys (N)")
        ax.set_ylabel("million keys / s")
        ax.set_yscale("log")  # CPU and GPU rates differ by 100x
        ax.set_title(f"{title}, load {load}")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    save(fig, outdir, "rate_vs_n.png")


def plot_rate_vs_load(runs, outdir):
    """Rates vs load factor at the largest N (thesis fig. 6.6: table size effects)."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharex=True)
    fields = ["insert_keys_per_s", "find_present_keys_per_s", "find_absent_keys_per_s"]
    titles = ["insert", "find (present keys)", "find (absent keys)"]
    for ci, data in enumerate(runs):
        n = max(r["n"] for r in data["map"])
        for ax, field in zip(axes, fields):
            for layout in layouts_of(data["map"]):
                rows = sorted((r for r in data["map"] if r["layout"] == layout and r["n"] == n
                               and not r["failed"]), key=lambda r: r["load"])
                if rows:
                    ax.plot([r["load"] for r in rows], [mrate(r[field]) for r in rows],
                            LAYOUT_STYLE[layout], color=f"C{ci}", marker="o",
                            label=f"{layout}, N=2^{n.bit_length() - 1} ({data['backend']})")
    for ax, title in zip(axes, titles):
        ax.set_xlabel("load factor (keys / slots)")
        ax.set_ylabel("million keys / s")
        ax.set_yscale("log")  # CPU and GPU rates differ by 100x
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    save(fig, outdir, "rate_vs_load.png")


def plot_rate_vs_absent(runs, outdir):
    """Find rate vs share of absent queries (thesis fig. 6.5)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for ci, data in enumerate(runs):
        for what in layouts_of(data["absent_share"], "structure") + ["sorted"]:
            rows = sorted((r for r in data["absent_share"] if r["structure"] == what),
                          key=lambda r: r["absent_percent"])
            if rows:
                n = rows[0]["n"]
                ax.plot([r["absent_percent"] for r in rows],
                        [mrate(r["find_keys_per_s"]) for r in rows], LAYOUT_STYLE[what],
                        color=f"C{ci}", marker="o",
                        label=f"{what}, N=2^{n.bit_length() - 1} ({data['backend']})")
    ax.set_xlabel("absent queries (%)")
    ax.set_ylabel("million queries / s")
    ax.set_yscale("log")  # CPU and GPU rates differ by 100x
    ax.set_title("find rate vs share of absent queries (load 0.8)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, outdir, "rate_vs_absent.png")


def plot_multimap(runs, outdir):
    """Multimap build and retrieve rates vs values per key (2009 paper, fig. 5)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for ci, data in enumerate(runs):
        rows = sorted(data["multimap"], key=lambda r: r["multiplicity"])
        if not rows:
            continue
        m = [r["multiplicity"] for r in rows]
        ax.plot(m, [mrate(r["build_values_per_s"]) for r in rows], "-", color=f"C{ci}",
                marker="o", label=f"build ({data['backend']})")
        ax.plot(m, [mrate(r["retrieve_values_per_s"]) for r in rows], "--", color=f"C{ci}",
                marker="s", label=f"retrieve ({data['backend']})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("values per key")
    ax.set_ylabel("million values / s")
    ax.set_yscale("log")  # CPU and GPU rates differ by 100x
    ax.set_title("multimap")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, outdir, "multimap.png")


def plot_index(runs, outdir):
    """Index build and both look-ups, one group of bars per run."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    fields = [("build_keys_per_s", "build"), ("key_to_id_per_s", "key -> id"),
              ("id_to_key_per_s", "id -> key")]
    width = 0.8 / max(1, len(runs))
    for ci, data in enumerate(runs):
        if not data["index"]:
            continue
        row = max(data["index"], key=lambda r: r["n"])
        xs = [i + ci * width for i in range(len(fields))]
        ax.bar(xs, [mrate(row[f]) for f, _ in fields], width, color=f"C{ci}",
               label=f"N=2^{row['n'].bit_length() - 1} ({label_of(data)})")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(fields))])
    ax.set_xticklabels([name for _, name in fields])
    ax.set_ylabel("million keys / s")
    ax.set_yscale("log")  # CPU and GPU rates differ by 100x
    ax.set_title("index (compacting table)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, outdir, "index.png")


def plot_coherent(runs, outdir):
    """The coherent-hashing paper's 2D experiment: find rate per scheme and key order."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    orders = ("row-major", "morton", "bit-reversal")
    width = 0.8 / max(1, len(orders) * len(runs))
    for ci, data in enumerate(runs):
        rows = data.get("coherent", [])
        kinds = layouts_of(rows)
        for oi, order in enumerate(orders):
            vals = [next((mrate(r["find_keys_per_s"]) for r in rows
                          if r["layout"] == k and r["order"] == order and not r["failed"]), 0)
                    for k in kinds]
            slot = len(orders) * ci + oi
            xs = [i + slot * width for i in range(len(kinds))]
            ax.bar(xs, vals, width, color=f"C{slot}", label=f"{order} ({label_of(data)})")
        ax.set_xticks(range(len(kinds)))
        ax.set_xticklabels(kinds, rotation=20)
    ax.set_ylabel("million queries / s")
    ax.set_yscale("log")
    ax.set_title("sparse 2D image: every pixel queried (Robin Hood at load 0.99)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, outdir, "coherent.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="output of geohash-match bench hash --json-out")
    ap.add_argument("-o", "--outdir", help="where the PNG files go")
    args = ap.parse_args()
    runs = [load(p) for p in args.json]
    outdir = args.outdir or os.path.dirname(os.path.abspath(args.json[0]))
    os.makedirs(outdir, exist_ok=True)
    plot_rate_vs_n(runs, outdir)
    plot_rate_vs_load(runs, outdir)
    plot_rate_vs_absent(runs, outdir)
    plot_multimap(runs, outdir)
    plot_index(runs, outdir)
    plot_coherent(runs, outdir)


if __name__ == "__main__":
    main()
