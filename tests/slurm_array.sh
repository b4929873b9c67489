#!/bin/bash
# Issue 19 on a real Slurm: starts munged, slurmctld and slurmd on localhost (Debian's slurm-wlm
# and munge, every file in a temporary directory, non-default ports, nothing under /etc), submits
# the shipped job arrays examples/slurm/sweep-array.sbatch and search-array.sbatch as 4 tasks
# each, waits for them, merges the parts and compares with the unsharded sweep and search. Every
# daemon it started is stopped on exit, also on failure. Without root, the packages or daemons
# that come up, it says why and exits 77 (CTest: skipped).
#
# Usage: slurm_array.sh MOE_PLAN EXAMPLES_DIR
set -euo pipefail
MOE_PLAN=$(realpath "$1")
EXAMPLES=$(realpath "$2")

skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root to run slurmctld and slurmd (CI runs as root)"
for tool in munged slurmctld slurmd sbatch sinfo; do
    command -v "$tool" >/dev/null || skip "$tool not found (apt-get install slurm-wlm munge)"
done

D=$(mktemp -d /tmp/moe-slurm.XXXXXX)
stop_daemons() {
    local status=$?
    for pidfile in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/munged.pid"; do
        [ -s "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
        for log in "$D"/slurmctld.log "$D"/slurmd.log "$D"/work/*.log; do
            [ -f "$log" ] && { echo "--- $log"; tail -n 20 "$log"; }
        done
    fi
    # A daemon that was still saving its state can recreate a file behind the first rm.
    for _ in 1 2 3; do rm -rf "$D" 2>/dev/null && [ ! -e "$D" ] && break; sleep 0.5; done
    exit "$status"
}
trap stop_daemons EXIT
trap 'exit 1' INT TERM

# munge: a fresh key, its own socket.
mkdir -p "$D/munge" "$D/spool/ctld" "$D/spool/d" "$D/work"
chmod 700 "$D/munge"
head -c 1024 /dev/urandom >"$D/munge/munge.key"
chmod 400 "$D/munge/munge.key"
munged --key-file="$D/munge/munge.key" --socket="$D/munge/munge.sock" \
    --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
    --seed-file="$D/munge/seed" --force || skip "munged did not start"

# Ports away from the defaults (6817/6818) and from other runs of this test.
base=$((20000 + $$ % 20000 * 2))
host=$(hostname -s)
cat >"$D/slurm.conf" <<CONF
ClusterName=moetest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CredType=cred/munge
SlurmctldPort=$base
SlurmdPort=$((base + 1))
StateSaveLocation=$D/spool/ctld
SlurmdSpoolDir=$D/spool/d
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$D/slurm.conf
slurmctld -f "$SLURM_CONF" || skip "slurmctld did not start"
slurmd -f "$SLURM_CONF" || skip "slurmd did not start"
for _ in $(seq 100); do
    state=$(sinfo -h -o %T 2>/dev/null | head -n 1 || true)
    [ "$state" = idle ] && break
    sleep 0.2
done
[ "$state" = idle ] || skip "the node did not come up (sinfo says '${state:-nothing}'); see $D"
echo "slurm up on $host, ports $base/$((base + 1))"

cd "$D/work"
GRID="--grid layout.ep=2,4,8,16 --grid training.micro_batch=1,2,4 --grid routing.zipf_alpha=0.3,0.6,0.9"
# One CPU per task so the arrays run on any machine. The settings go through the environment:
# --export=NAME=VALUE would split a value at its commas.
export MOE_PLAN PARTS_DIR="$D/work/parts" SWEEP_GRID="$GRID"
export SEARCH_OPTIONS="--set cluster.gpu_overrides.hbm_gb=18"
jobs=""
for job in sweep-array search-array; do
    id=$(sbatch --parsable --array=0-3 --cpus-per-task=1 --chdir="$D/work" --export=ALL \
        "$EXAMPLES/$job.sbatch")
    jobs="$jobs${jobs:+,}${id%%;*}"
done
# Polled rather than sbatch --wait, which checks only every few seconds.
for _ in $(seq 250); do
    [ -z "$(squeue -h -j "$jobs" 2>/dev/null)" ] && break
    sleep 0.2
done
[ -z "$(squeue -h -j "$jobs")" ] || { echo "FAIL: jobs $jobs still queued after 50 s"; exit 1; }
# Every task of both arrays completed (exit 0). scontrol takes one job id at a time; an array's
# id shows all its tasks.
tasks=$(for id in ${jobs//,/ }; do scontrol -o show job "$id"; done)
echo "tasks: $(grep -o 'JobState=[A-Z]*' <<<"$tasks" | sort | uniq -c | tr -s ' \n' ' ')"
[ "$(grep -c 'JobState=COMPLETED' <<<"$tasks")" -eq 8 ] ||
    { echo "FAIL: not every task completed"; exit 1; }

ls parts/part-{0,1,2,3}.jsonl parts/search-{0,1,2,3}.json >/dev/null
export MOE_PLAN_PROGRESS=never
# shellcheck disable=SC2086
"$MOE_PLAN" sweep $GRID >whole.jsonl
"$MOE_PLAN" sweep --merge parts/part-*.jsonl >merged.jsonl
cmp whole.jsonl merged.jsonl
echo "sweep: $(wc -l <merged.jsonl) rows from 4 array tasks merged, identical to the unsharded sweep"

"$MOE_PLAN" search --set cluster.gpu_overrides.hbm_gb=18 --json | grep -v '_s"\|_per_s"\|"threads"' >whole.json
"$MOE_PLAN" search --set cluster.gpu_overrides.hbm_gb=18 --json --merge parts/search-*.json |
    grep -v '_s"\|_per_s"\|"threads"' >merged.json
cmp whole.json merged.json
echo "search: 4 array tasks merged, identical to the unsharded search (timings aside)"
