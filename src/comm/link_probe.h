/* comm/link_probe.h — which backend is faster between machines, measured.
 *
 * `--comm auto` on ranks spread over several machines uses shm within each
 * machine and, between machines, p2p or rma: whichever moves a typical
 * halo message faster on this network. The probe decides it at start-up:
 * every rank sends 64 KiB to the next rank (in rank order, cyclically) on
 * another machine, as a persistent exchange of each backend in turn, a few
 * executions to warm up and then kRounds timed; the slowest rank's time
 * per execution counts. Collective over the world; it runs once, before the
 * simulation, and costs a few milliseconds on a LAN.
 */
#pragma once

#include <algorithm>
#include <string>

#include "comm/communicator.h"

namespace putmd::comm
{

struct LinkProbe
{
    Backend across     = Backend::P2p; // the faster of p2p and rma between machines
    double  p2pSeconds = 0;            // per execution, slowest rank
    double  rmaSeconds = 0;
    int     machines   = 1;            // machines the job spans
    std::string ranksPerMachine;       // e.g. "2, 2"
};

/* Collective over the world (parallel mode, more than one machine). */
LinkProbe probeLinksAcrossMachines();

/* What a message costs on the network the ranks span, for the prediction
 * of --npme (pme/npme_model.h). On one machine: constants, measured with 2
 * ranks of water-spce-12k through shared memory (their PME traffic, about
 * 0.9 MB a step, took 0.14 ms), so that the choice is the same in every
 * run. */
struct NetworkCost
{
    double      latency    = 1.0e-6;  // s, one message in a chain of dependent ones
    double      perMessage = 0.3e-6;  // s, each message of a burst beyond the first
    double      perByte    = 0.15e-9; // s per byte moved, with loadedRanks ranks moving bytes at once
    double      perByteAlone = 0.15e-9; // s per byte, two ranks alone on the network
    int         loadedRanks  = 0;       // 0: perByte does not depend on the load
    std::string source     = "one machine (shared-memory constants)";

    /* Seconds per byte when `active` ranks move bytes at once: a shared
     * network's throughput split among them, never better than two ranks
     * alone get. */
    double perByteWith(int active) const
    {
        return loadedRanks > 0 ? std::max(perByteAlone, perByte * active / loadedRanks) : perByte;
    }
};

/* Collective over the world. All ranks on one machine: the constants.
 * Otherwise (and always under SMPI, whose hosts share no memory) every
 * rank exchanges with others at once, as in a transpose, so that the
 * figures are those of a loaded network: one message of 8 bytes each way
 * (the latency), 16 at once (+15 per-message costs), one of 64 KiB (+ its
 * bytes, the network's throughput shared by all); 10 executions of each
 * in a chain, each with other partners, after 2 to warm up, timed by the
 * slowest rank. Then a ping-pong of 8 bytes and of 64 KiB between world
 * rank 0 and a rank on another machine with the others idle (the bytes'
 * cost on an unloaded network; rank 0's median of 10, sent to all).
 * Every rank gets the same figures. Measured once per run (later calls
 * return the first figures). A few milliseconds on a LAN; seconds of real
 * time for 1,024 simulated ranks. */
NetworkCost probeNetworkCost();

} // namespace putmd::comm
