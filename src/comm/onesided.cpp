/* comm/onesided.cpp — layout, arena allocation and plan round 2 of the
 * one-sided backends (see onesided.h). */
#include "comm/onesided.h"

#include <algorithm>
#include <map>

namespace putmd::comm
{

namespace
{
constexpr int kTagPlaces = 2;
}

OneSidedExchange::OneSidedExchange(Communicator::Impl& comm, Phase phase, bool dataAtReceiver, int regions) :
    ExchangeBase(comm, phase), dataAtReceiver_(dataAtReceiver), regions_(regions)
{
}

void OneSidedExchange::planRemote()
{
    Arena& a = comm_.ensureArena();
    peerCtrl_.resize(comm_.size);

    // Links whose regions live here, and links whose regions live at peers.
    auto& mineLinks   = dataAtReceiver_ ? recvs_ : sends_;
    auto& mineByPeer  = dataAtReceiver_ ? recvPeers_ : sendPeers_;
    auto& theirLinks  = dataAtReceiver_ ? sends_ : recvs_;
    auto& theirByPeer = dataAtReceiver_ ? sendPeers_ : recvPeers_;

    std::size_t need = 0;
    for (auto& p : mineByPeer)
    {
        for (int l : p.links)
        {
            need += std::size_t(regions_) * Arena::aligned(mineLinks[l].bytes);
        }
    }
    std::vector<std::size_t> requests;
    const bool               newCtrl = ctrl_.gen < 0;
    const bool               newData = need > dataCap_ || data_.gen < 0;
    if (newCtrl)
    {
        requests.push_back(16 * std::size_t(comm_.size));
    }
    if (newData)
    {
        dataCap_ = std::max({need, 2 * dataCap_, Arena::kAlign});
        requests.push_back(dataCap_);
    }
    auto blocks = a.allocate(phase_, requests, seq_); // collective; agrees on seq_
    if (newCtrl)
    {
        ctrl_ = blocks[0];
    }
    if (newData)
    {
        data_ = blocks.back();
    }

    own_.assign(mineLinks.size(), Region{});
    remote_.assign(theirLinks.size(), Region{});
    std::size_t at = data_.offset;
    for (auto& p : mineByPeer)
    {
        for (int l : p.links)
        {
            const std::size_t cap = Arena::aligned(mineLinks[l].bytes);
            own_[l].gen           = data_.gen;
            for (int k = 0; k < regions_; ++k)
            {
                own_[l].off[k] = at + std::size_t(k) * cap;
            }
            at += std::size_t(regions_) * cap;
        }
    }

    // Round 2: places to every peer we share a link with, places from it.
    std::map<int, std::vector<std::uint64_t>> out, in;
    auto                                      header = [&](int peer) -> std::vector<std::uint64_t>& {
        auto& v = out[peer];
        if (v.empty())
        {
            v = {std::uint64_t(ctrl_.gen), ctrl_.offset};
        }
        return v;
    };
    for (auto& p : sendPeers_)
    {
        header(p.peer);
    }
    for (auto& p : recvPeers_)
    {
        header(p.peer);
    }
    for (auto& p : mineByPeer)
    {
        auto& v = out[p.peer];
        for (int l : p.links)
        {
            v.insert(v.end(), {std::uint64_t(own_[l].gen), own_[l].off[0], own_[l].off[1], own_[l].off[2]});
        }
    }
    std::map<int, std::size_t> theirCount;
    for (auto& [peer, v] : out)
    {
        theirCount[peer] = 0;
    }
    for (auto& p : theirByPeer)
    {
        theirCount[p.peer] = p.links.size();
    }

    std::vector<MPI_Request> requestsOut;
    for (auto& [peer, v] : out)
    {
        in[peer].resize(2 + 4 * theirCount[peer]);
        requestsOut.emplace_back();
        MPI_Irecv(in[peer].data(), static_cast<int>(in[peer].size()), MPI_UINT64_T, peer, kTagPlaces, planComm_,
                  &requestsOut.back());
    }
    for (auto& [peer, v] : out)
    {
        requestsOut.emplace_back();
        MPI_Isend(v.data(), static_cast<int>(v.size()), MPI_UINT64_T, peer, kTagPlaces, planComm_,
                  &requestsOut.back());
    }
    waitRequests(requestsOut, [&] { return describe("the plan (arena places) of its peers", -1, seq_); });

    for (auto& [peer, v] : in)
    {
        peerCtrl_[peer] = ArenaBlock{static_cast<int>(v[0]), v[1]};
    }
    for (auto& p : theirByPeer)
    {
        const auto& v = in[p.peer];
        for (std::size_t k = 0; k < p.links.size(); ++k)
        {
            Region& r = remote_[p.links[k]];
            r.gen     = static_cast<int>(v[2 + 4 * k]);
            for (int j = 0; j < 3; ++j)
            {
                r.off[j] = v[3 + 4 * k + std::size_t(j)];
            }
        }
    }
}

} // namespace putmd::comm
