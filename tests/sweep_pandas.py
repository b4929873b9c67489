#!/usr/bin/python3
"""A 1,000-point sweep of the default scenario loads in pandas (issue 19), as JSONL and as CSV.

JSONL: pandas.read_json(lines=True) gives one row per point; pandas.json_normalize flattens the
nested objects into the same columns as the CSV ("overrides.layout.ep", "layout.tp",
"breakdown.all_to_all"), with numeric dtypes for the overrides and the figures. The time is
printed (speed is measured, not asserted).

Usage: sweep_pandas.py MOE_PLAN. Exit 77 (skipped) without python3-pandas.
"""
import io
import json
import subprocess
import sys
import time

try:
    import pandas as pd
except ImportError:
    print("SKIP: python3-pandas is not installed (apt-get install python3-pandas)")
    sys.exit(77)

MOE_PLAN = sys.argv[1]
GRID = ["--grid", "layout.ep=1,2,4,8,16", "--grid", "training.micro_batch=1,2,4,8",
        "--grid", "routing.balance=0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
        "--grid", "routing.zipf_alpha=0.2,0.4,0.6,0.8,1.0"]


def sweep(*extra):
    t0 = time.monotonic()
    p = subprocess.run([MOE_PLAN, "sweep", *GRID, *extra], capture_output=True, text=True,
                       check=True, env={"MOE_PLAN_PROGRESS": "never"})
    return p.stdout, time.monotonic() - t0, p.stderr.strip()


jsonl, seconds, note = sweep()
print(f"1,000-point sweep of the default: {seconds:.2f} s wall ({note})")
rows = pd.read_json(io.StringIO(jsonl), lines=True, precise_float=True)
assert rows.shape[0] == 1000, rows.shape
assert list(rows["point"]) == list(range(1000))
flat = pd.json_normalize(rows.to_dict("records"))
for column in ["overrides.layout.ep", "overrides.routing.balance", "layout.edp", "step_time_s",
               "breakdown.all_to_all"]:
    assert pd.api.types.is_numeric_dtype(flat[column]), (column, flat[column].dtype)
# Every point is a valid scenario; those that do not fit in HBM say so ("fits").
assert flat["ok"].all(), flat.loc[~flat["ok"], "errors"].head()
fitting = flat[flat["fits"]]
assert 0 < len(fitting) < len(flat)
fastest = fitting.loc[fitting["step_time_s"].idxmin()]
print("fastest point that fits:", {k: fastest[k] for k in ["overrides.layout.ep",
                                                   "overrides.training.micro_batch",
                                                   "overrides.routing.balance",
                                                   "overrides.routing.zipf_alpha",
                                                   "step_time_s", "fits"]})

csv, _, _ = sweep("--format", "csv")
table = pd.read_csv(io.StringIO(csv), float_precision="round_trip")
assert table.shape[0] == 1000, table.shape
assert set(table.columns) == set(flat.columns), set(table.columns) ^ set(flat.columns)
assert (table["step_time_s"] - flat["step_time_s"]).abs().max() == 0
print("JSONL and CSV load in pandas", pd.__version__, "with", flat.shape[1], "columns")
