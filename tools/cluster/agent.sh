#!/usr/bin/env bash
# Open MPI's "remote shell" for the namespace hosts of mpirun-hosts.sh:
#   agent HOST COMMAND...
# runs COMMAND (a shell command line, as ssh would run it) inside HOST's
# network, UTS and mount namespaces. HOST is the address in the hostfile;
# @HOSTS@ (filled in by mpirun-hosts.sh) maps it to the host's keeper pid.
set -eu
host=$1
shift
# Open MPI passes options for ssh before the host name when it thinks the
# agent is ssh; skip anything that looks like one
while [[ $host == -* ]]; do host=$1; shift; done
pid=$(awk -v h="$host" '$1 == h {print $2}' @HOSTS@)
if [[ -z $pid ]]; then
    echo "agent: '$host' is not one of the namespace hosts ($(awk '{print $1}' @HOSTS@ | tr '\n' ' '))" >&2
    exit 1
fi
exec nsenter -t "$pid" --net --uts --mount -- sh -c "$*"
