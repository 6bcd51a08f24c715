# Median and mean of each timings_ms field over the JSON lines of a video run.
import json, sys, statistics
rows = [json.loads(l)["timings_ms"] for l in open(sys.argv[1]) if l.startswith("{")]
keys = rows[0].keys() if rows else []
print(sys.argv[2], len(rows), "frames;", ", ".join(
    f"{k} {statistics.median(r[k] for r in rows):.3f}/{statistics.fmean(r[k] for r in rows):.3f}" for k in keys))
