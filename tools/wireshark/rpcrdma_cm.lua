-- SPDX-License-Identifier: GPL-2.0
--
-- rpcrdma_cm.lua: a Wireshark/tshark dissector for the RPC-over-RDMA CM
-- private data of RFC 8797 (8 octets: format identifier 0xf6ab0e18,
-- version 1, flags with bit 0 = Remote Invalidation, max send and max
-- receive size, each encoded as bytes / 1024 - 1).
--
-- It registers as a heuristic on "infiniband.mad.cm.private", the list the
-- InfiniBand dissector hands CM REQ and REP private data to (InfiniBand,
-- and RoCE v1/v2 since those carry the same CM MADs). It claims:
--   - a REQ to an NFS/RDMA service port (preference, default 20049) and
--     its REP (matched by communication ID), conforming or not, so that
--     non-conforming private data gets an expert warning;
--   - any REQ or REP whose consumer private data starts with the format
--     identifier.
-- For a REQ made through the RDMA CM (service ID 0x000000000106PPPP for
-- RDMA_PS_TCP port PPPP) the consumer's data follows the 36-octet IP CM
-- header, which Wireshark 4 strips before calling the heuristics; in a
-- REP it starts at the first octet.
--
-- Fields: rpcrdma_cm.magic, .version, .flags, .ri, .reserved, .max_send,
-- .max_recv (in bytes), .conformance (ok, absent, zeroed, short, bad_magic,
-- unknown_version: the names rpcrdma_cm.ko's debugfs uses).
--
-- Install: copy to ~/.local/lib/wireshark/plugins/ (Wireshark 4.x), or
-- use it once: tshark -X lua_script:tools/wireshark/rpcrdma_cm.lua -r FILE
-- iWARP (siw, MPA Request/Reply) is decoded by a postdissector: the MPA
-- dissector offers no heuristic list for its private data.

local rpcrdma_cm = Proto("rpcrdma_cm", "RPC-over-RDMA CM Private Data (RFC 8797)")

local MAGIC = 0xf6ab0e18
local MESSAGE_LEN = 8
-- The RDMA CM's IP CM header in a REQ's private data.
local IP_CM_HEADER_LEN = 36
-- The private data area of an IB CM REQ.
local REQ_PRIVATE_LEN = 92
-- Service ID of an RDMA CM connection: 0x0000000001, the port space
-- (0x06 for RDMA_PS_TCP), the port.
local IP_CM_SERVICE_PREFIX_TCP = 0x0106

local fields = {
    magic = ProtoField.uint32("rpcrdma_cm.magic", "Format Identifier", base.HEX),
    version = ProtoField.uint8("rpcrdma_cm.version", "Version", base.DEC),
    flags = ProtoField.uint8("rpcrdma_cm.flags", "Flags", base.HEX),
    ri = ProtoField.bool("rpcrdma_cm.ri", "Remote Invalidation", 8, nil, 0x01),
    reserved = ProtoField.uint8("rpcrdma_cm.reserved", "Reserved flag bits", base.HEX),
    max_send = ProtoField.uint32("rpcrdma_cm.max_send", "Max Send Size (bytes)", base.DEC),
    max_recv = ProtoField.uint32("rpcrdma_cm.max_recv", "Max Receive Size (bytes)", base.DEC),
    conformance = ProtoField.string("rpcrdma_cm.conformance", "Conformance"),
}
rpcrdma_cm.fields = {
    fields.magic, fields.version, fields.flags, fields.ri, fields.reserved,
    fields.max_send, fields.max_recv, fields.conformance,
}

local experts = {
    nonconforming = ProtoExpert.new("rpcrdma_cm.nonconforming.expert",
        "Non-conforming RFC 8797 private data: the peer counts as 1024/1024 without Remote Invalidation",
        expert.group.PROTOCOL, expert.severity.WARN),
    reserved = ProtoExpert.new("rpcrdma_cm.reserved.expert",
        "Reserved flag bits set (ignored by the receiver)",
        expert.group.PROTOCOL, expert.severity.NOTE),
}
rpcrdma_cm.experts = { experts.nonconforming, experts.reserved }

rpcrdma_cm.prefs.ports = Pref.range("NFS/RDMA ports", "20049",
    "RDMA CM ports whose connections carry RFC 8797 private data", 65535)

local f_req_serviceid = Field.new("infiniband.cm.req.serviceid")
local f_req_commid = Field.new("infiniband.cm.req")
local f_rep_remotecommid = Field.new("infiniband.cm.rep.remotecommid")

-- Local communication IDs of REQs to an NFS/RDMA port, so that their REPs
-- are claimed too.
local nfs_rdma_comm_ids = {}

function rpcrdma_cm.init()
    nfs_rdma_comm_ids = {}
end

-- The size an encoded octet stands for.
local function size_bytes(octet)
    return (octet + 1) * 1024
end

-- How the core classifies private data (rust/proto/cm_private.rs).
local function classify(tvb)
    local len = tvb:len()
    if len == 0 then
        return "absent"
    end
    local all_zero = true
    for i = 0, len - 1 do
        if tvb(i, 1):uint() ~= 0 then
            all_zero = false
            break
        end
    end
    if all_zero then
        return "zeroed"
    end
    if len < MESSAGE_LEN then
        return "short"
    end
    if tvb(0, 4):uint() ~= MAGIC then
        return "bad_magic"
    end
    if tvb(4, 1):uint() ~= 1 then
        return "unknown_version"
    end
    return "ok"
end

-- Whether PORT is in a range preference's text ("20049", "2050,20049-20051").
local function in_ranges(text, port)
    for part in string.gmatch(text, "[^,%s]+") do
        local lo, hi = string.match(part, "^(%d+)-(%d+)$")
        if lo == nil then
            lo = string.match(part, "^(%d+)$")
            hi = lo
        end
        if lo ~= nil and port >= tonumber(lo) and port <= tonumber(hi) then
            return true
        end
    end
    return false
end

-- The port of an RDMA CM (RDMA_PS_TCP) service ID, or nil.
local function ip_cm_port(serviceid)
    if serviceid:rshift(16):tonumber() ~= IP_CM_SERVICE_PREFIX_TCP then
        return nil
    end
    return serviceid:band(UInt64(0xffff)):tonumber()
end

-- The consumer's part of the CM private data in this packet, and whether
-- it belongs to an NFS/RDMA connection; nil if this is neither a REQ nor
-- a REP.
local function consumer_data(tvb)
    local sid = f_req_serviceid()
    if sid then
        local port = ip_cm_port(sid.value)
        local data = tvb
        -- Wireshark 4 hands over the consumer's 56 octets after the IP CM
        -- header; a dissector that hands over the whole 92-octet area
        -- leaves the header in front.
        if port ~= nil and tvb:len() == REQ_PRIVATE_LEN then
            data = tvb(IP_CM_HEADER_LEN):tvb()
        end
        local nfs = port ~= nil and in_ranges(tostring(rpcrdma_cm.prefs.ports), port)
        local commid = f_req_commid()
        if nfs and commid then
            nfs_rdma_comm_ids[commid.value] = true
        end
        return data, nfs
    end
    local remote = f_rep_remotecommid()
    if remote then
        return tvb, nfs_rdma_comm_ids[remote.value] == true
    end
    return nil, false
end

local function dissect(data, pinfo, tree)
    local conformance = classify(data)
    local len = math.min(data:len(), MESSAGE_LEN)
    local item = tree:add(rpcrdma_cm, data(0, len))
    if len >= 4 then
        item:add(fields.magic, data(0, 4))
    end
    if conformance == "ok" then
        local flags = data(5, 1):uint()
        local send = size_bytes(data(6, 1):uint())
        local recv = size_bytes(data(7, 1):uint())
        item:add(fields.version, data(4, 1))
        local flags_item = item:add(fields.flags, data(5, 1))
        flags_item:add(fields.ri, data(5, 1))
        flags_item:add(fields.reserved, data(5, 1), flags - flags % 2)
        item:add(fields.max_send, data(6, 1), send):append_text(string.format(" (encoded %d)", data(6, 1):uint()))
        item:add(fields.max_recv, data(7, 1), recv):append_text(string.format(" (encoded %d)", data(7, 1):uint()))
        local summary = string.format("v1 send=%d recv=%d ri=%d", send, recv, flags % 2)
        if flags >= 2 then
            summary = summary .. string.format(" reserved=0x%02x", flags - flags % 2)
            flags_item:add_proto_expert_info(experts.reserved)
        end
        item:append_text(", " .. summary)
        pinfo.cols.info:append(" [RFC 8797 " .. summary .. "]")
    else
        if len >= 5 and conformance == "unknown_version" then
            item:add(fields.version, data(4, 1))
        end
        item:append_text(", not conforming: " .. conformance)
        item:add_proto_expert_info(experts.nonconforming)
        pinfo.cols.info:append(" [RFC 8797 not conforming: " .. conformance .. "]")
    end
    item:add(fields.conformance, conformance)
end

local function heuristic(tvb, pinfo, tree)
    local data, nfs = consumer_data(tvb)
    if data == nil then
        return false
    end
    local magic = data:len() >= 4 and data(0, 4):uint() == MAGIC
    if not (nfs or magic) then
        return false
    end
    dissect(data, pinfo, tree)
    return true
end

rpcrdma_cm:register_heuristic("infiniband.mad.cm.private", heuristic)

-- iWARP: Wireshark's MPA dissector shows MPA Request/Reply private data
-- as bytes and hands it to no list, so a postdissector looks at it. With
-- MPA revision 2 the first 4 octets are the IRD/ORD of enhanced connection
-- establishment (RFC 6581); the consumer's data follows.
local f_mpa_privatedata = Field.new("iwarp_mpa.privatedata")
local f_mpa_rev = Field.new("iwarp_mpa.rev")
local f_mpa_req = Field.new("iwarp_mpa.req")

function rpcrdma_cm.dissector(tvb, pinfo, tree)
    local pd = f_mpa_privatedata()
    if pd == nil then
        return
    end
    local data = pd.range:tvb()
    local rev = f_mpa_rev()
    if rev and rev.value == 2 then
        if data:len() < 4 then
            return
        end
        data = data:range(4):tvb()
    end
    -- The request goes to the NFS/RDMA port, the reply comes from it.
    local port = f_mpa_req() and pinfo.dst_port or pinfo.src_port
    local magic = data:len() >= 4 and data(0, 4):uint() == MAGIC
    if in_ranges(tostring(rpcrdma_cm.prefs.ports), port) or magic then
        dissect(data, pinfo, tree)
    end
end

register_postdissector(rpcrdma_cm)
