#!/bin/sh
# --comm auto (the default) on one machine: the ranks use shm and the log's
# domain-decomposition line names the choice and the reason.
# usage: comm_auto_test.sh MPIRUN PUTMD SYSTEM_DIR WORKDIR
set -eu
mpirun=$1 putmd=$2 sys=$3 work=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
$mpirun -np 2 "$putmd" run -p "$sys/topol.top" -c "$sys/conf.gro" -f "$sys/md.mdp" -nsteps 2 -deffnm "$work/auto" > /dev/null
grep 'Domain decomposition:' "$work/auto.log"
