#!/usr/bin/env bash
# A single-node Slurm on this machine, for the tests of `dspk plan/run/gather` on a real
# scheduler: munged, slurmctld and slurmd from Debian's packages (`apt-get install slurm-wlm
# munge`), every file of theirs (key, slurm.conf, state, spool, logs, sockets) in one folder.
#
#   tests/cluster/slurm.sh start DIR   start it; prints `export SLURM_CONF=DIR/slurm.conf`
#   tests/cluster/slurm.sh stop DIR    stop what `start DIR` started (by the pids it wrote)
#
# Runs as root (CI's containers) or as a user who may run the daemons; no cgroups, no
# accounting database: proctrack/linuxproc, task/none, accounting_storage/none.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

stop() {
    if [ -f "$dir/slurm.conf" ]; then
        SLURM_CONF="$dir/slurm.conf" scontrol shutdown >/dev/null 2>&1 || true
    fi
    for name in slurmd slurmctld munged; do
        pidfile="$dir/run/$name.pid"
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            kill "$pid" 2>/dev/null || true
            sleep 0.1
        done
        rm -f "$pidfile"
    done
}

missing=()
for tool in munged slurmctld slurmd sbatch scontrol squeue scancel; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done

case "$cmd" in
stop)
    stop
    exit 0
    ;;
start) ;;
*) usage ;;
esac

if [ ${#missing[@]} -gt 0 ]; then
    echo "error: ${missing[*]} not found: apt-get install -y slurm-wlm munge" >&2
    exit 3
fi

mkdir -p "$dir/run" "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
chmod 700 "$dir/munge"
# Two free TCP ports for slurmctld and slurmd (several clusters may run on one machine).
read -r ctld_port slurmd_port < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
PY
)
host=$(hostname -s)
user=$(id -un)
cpus=$(nproc)
# The node's memory in MiB, less a little for the daemons: jobs may ask for --mem up to it.
memory_mib=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)

if [ ! -f "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge/munge.key"
fi
socket="$dir/munge/munge.socket"
munged --force --key-file="$dir/munge/munge.key" --socket="$socket" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munge.seed"

cat >"$dir/slurm.conf" <<CONF
# Written by tests/cluster/slurm.sh: one node, this machine.
ClusterName=dspk-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobRequeue=1
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mib State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

export SLURM_CONF="$dir/slurm.conf"
slurmctld -i
slurmd -N "$host"

# Ready when the node takes jobs.
for _ in $(seq 150); do
    state=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
    case "$state" in
    idle*|mix*|alloc*)
        echo "export SLURM_CONF=$SLURM_CONF"
        exit 0
        ;;
    esac
    sleep 0.2
done
echo "error: the Slurm node did not come up (state '${state:-none}'); logs in $dir/log:" >&2
tail -n 20 "$dir/log/"*.log >&2 || true
stop
exit 1
