#!/usr/bin/python3
"""Every JSON document moe-plan writes validates against its schema in schemas/ (issue 19).

Runs each command that writes JSON on the samples (evaluate, show, validate, bench, timeline and
timeline --bench, compare, catalog, calibrate, search and its --shard parts, sweep rows valid and invalid)
and the JSON errors on standard error (a usage error, bad input, warnings-only), and validates
each document with python3-jsonschema (Debian's, Draft 2020-12). Also checks that the schemas
reject what they must (a document without its layout, an unknown key, a wrong type), so this
test can fail.

Usage: json_schemas.py MOE_PLAN SCHEMAS_DIR SAMPLES_DIR. Exit 77 (skipped) without jsonschema.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)

MOE_PLAN, SCHEMAS, SAMPLES = sys.argv[1:4]
BASE = "https://moe-planner.invalid/schemas/"

store = {}
for path in glob.glob(os.path.join(SCHEMAS, "*.schema.json")):
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    store[schema["$id"]] = schema
checked = {name: 0 for name in store}
failures = []


def validator(name):
    schema = store[BASE + name + ".schema.json"]
    resolver = jsonschema.RefResolver(base_uri=schema["$id"], referrer=schema, store=store)
    return jsonschema.Draft202012Validator(schema, resolver=resolver)


def check(name, document, where):
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.path))
    checked[BASE + name + ".schema.json"] += 1
    for e in errors[:3]:
        failures.append(f"{where}: {name}: {'/'.join(map(str, e.path))}: {e.message[:300]}")


def run(args, expect=0, stdin=None):
    p = subprocess.run([MOE_PLAN] + args, capture_output=True, text=True, input=stdin,
                       timeout=120, env=dict(os.environ, MOE_PLAN_PROGRESS="never"))
    if p.returncode != expect:
        failures.append(f"moe-plan {' '.join(args)}: exit {p.returncode}, expected {expect}: "
                        f"{p.stderr[:300]}")
    return p


def check_output(name, args, expect=0):
    p = run(args, expect)
    try:
        check(name, json.loads(p.stdout), "moe-plan " + " ".join(args))
    except json.JSONDecodeError as e:
        failures.append(f"moe-plan {' '.join(args)}: not JSON: {e}")
    return p


def check_error(args, expect):
    p = run(args, expect)
    try:
        check("error", json.loads(p.stderr), "stderr of moe-plan " + " ".join(args))
    except json.JSONDecodeError as e:
        failures.append(f"stderr of moe-plan {' '.join(args)}: not JSON: {e}: {p.stderr[:200]}")


samples = sorted(glob.glob(os.path.join(SAMPLES, "**", "*.yaml"), recursive=True))
default = os.path.join(SAMPLES, "dgx-h100-8x8-moe16.yaml")
for sample in samples:
    check_output("evaluate", ["evaluate", "--json", sample])
    check_output("show", ["show", "--json", sample])
    check_output("timeline", ["timeline", "--json", "--steps", "2", sample])
check_output("validate", ["validate", "--json"] + samples)
check_output("bench", ["bench", "--json", "--repeat", "2", default, samples[0]])
check_output("bench", ["bench", "--json", "--search", "--repeat", "1", default])
check_output("timeline", ["timeline", "--json", "--bench"])
check_output("compare", ["compare", "--json", default, samples[0]])
check_output("catalog", ["catalog", "--json"])
check_output("calibrate", ["calibrate", "--json"])
check_output("calibrate", ["calibrate", "--json", "--case", "deepep-ep8-dispatch"])
check_error(["calibrate", "--json", "--case", "no-such-case"], 1)
check_output("search", ["search", "--json", "--top", "3"])
check_output("search", ["search", "--json", "--set", "cluster.gpu_overrides.hbm_gb=10"], expect=1)
p = run(["evaluate", "--json", "-"], stdin=open(default, encoding="utf-8").read())
check("evaluate", json.loads(p.stdout), "evaluate --json - (stdin)")

with tempfile.TemporaryDirectory() as tmp:
    for i in range(2):
        part = os.path.join(tmp, f"part{i}.json")
        run(["search", "--shard", f"{i}/2", "-o", part])
        with open(part, encoding="utf-8") as f:
            check("search-part", json.load(f), part)
    check_output("search", ["search", "--json", "--merge"] +
                 [os.path.join(tmp, f"part{i}.json") for i in range(2)])

# Sweep rows, with invalid points (EP=12 does not divide 16 experts).
p = run(["sweep", "--grid", "layout.ep=4,8,12", "--grid", "routing.zipf_alpha=0.5,1.0",
         "--pin", "layout.order=tp-cp-ep-dp-pp"])
rows = [json.loads(line) for line in p.stdout.splitlines()]
if len(rows) != 6 or sum(not r["ok"] for r in rows) != 2:
    failures.append(f"sweep: expected 6 rows, 2 invalid; got {len(rows)}")
for r in rows:
    check("sweep-row", r, f"sweep row {r.get('point')}")

# Problems as JSON on standard error.
check_error(["evaluate", "--json", "--frob"], 2)
check_error(["evaluate", "--json", "--set", "layout.ep=12"], 1)
check_error(["validate", "--json", default, "/nonexistent.yaml"], 1)
check_error(["search", "--json", "--set", "cluster.gpu_overrides.hbm_gb=10"], 1)
check_error(["timeline", "--json", "--steps", "2", "--trace", "/nonexistent-dir/t.json"], 1)

# The schemas reject what they must.
evaluate = json.loads(run(["evaluate", "--json"]).stdout)
broken = [dict(evaluate), dict(evaluate), dict(evaluate), dict(evaluate)]
del broken[0]["layout"]
broken[1]["unexpected"] = 1
broken[2]["step_time_s"] = "2.4 s"
broken[3]["layout"] = dict(evaluate["layout"], recompute="sometimes")
for i, doc in enumerate(broken):
    if validator("evaluate").is_valid(doc):
        failures.append(f"the evaluate schema accepts broken document #{i}")
calibrate = json.loads(run(["calibrate", "--json", "--case", "sc21-1.7b"]).stdout)
uncited = dict(calibrate, cases=[dict(calibrate["cases"][0], source="")])
if validator("calibrate").is_valid(uncited):
    failures.append("the calibrate schema accepts a case without a source")
row = dict(rows[0], ok=False)
if validator("sweep-row").is_valid(row):
    failures.append("the sweep-row schema accepts ok=false with figures")

for schema_id, count in sorted(checked.items()):
    name = schema_id[len(BASE):]
    if count == 0 and name != "common.schema.json":
        failures.append(f"{name}: no document was checked against it")
    print(f"{name}: {count} documents")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
