-- Wireshark dissector for Axon source-routed Ethernet (Tandem; layout in docs/formats.md, "Axon").
--
-- Axon frames start with the Axon header, not an Ethernet header, so captures of Axon links are
-- written with link type LINKTYPE_USER0 (147); this script claims that link type.
--
--   tshark -X lua_script:tools/wireshark/axon.lua -r axon.pcap -V
--   wireshark -X lua_script:tools/wireshark/axon.lua axon.pcap
--
-- (or copy it to ~/.local/lib/wireshark/plugins/). The encapsulated Ethernet frame of a type
-- 0x02 packet is handed to Wireshark's Ethernet dissector.

local axon = Proto("axon", "Axon source-routed Ethernet")

local TYPE_ETHERNET, TYPE_CONTROL, TYPE_PROBE, TYPE_ERROR = 0x02, 0x06, 0x0a, 0x0e
local FIXED_NIBBLES = 11

local type_names = {
    [TYPE_ETHERNET] = "Ethernet",
    [TYPE_CONTROL] = "Control",
    [TYPE_PROBE] = "Probe",
    [TYPE_ERROR] = "Error",
}
local kind_names = { [1] = "Axon-ARP request", [2] = "Axon-ARP reply", [3] = "Hello", [4] = "Hello reply" }
local point_names = { [0] = "input", [1] = "output" }
local error_names = {
    [1] = "no forward hop left",
    [2] = "wrong type for a host port",
    [3] = "no such port",
    [4] = "reverse path full",
}

local f = axon.fields
f.type = ProtoField.uint8("axon.type", "Type", base.HEX, type_names)
f.hdr_len = ProtoField.uint16("axon.hdr_len", "Header length", base.DEC, nil, 0xfff0)
f.fwd_count = ProtoField.uint16("axon.fwd_count", "Forward hop count", base.DEC, nil, 0x0fff)
f.rev_count = ProtoField.uint16("axon.rev_count", "Reverse hop count", base.DEC, nil, 0xfff0)
f.next_hop = ProtoField.uint8("axon.next_hop", "Next forward hop", base.DEC, nil, 0x0f)
f.fwd_path = ProtoField.string("axon.fwd_path", "Forward path")
f.rev_path = ProtoField.string("axon.rev_path", "Reverse path")
f.fwd_hop = ProtoField.uint8("axon.fwd_hop", "Forward hop", base.DEC)
f.rev_hop = ProtoField.uint8("axon.rev_hop", "Reverse hop", base.DEC)

f.ctl_kind = ProtoField.uint8("axon.ctl.kind", "Control message", base.DEC, kind_names)
f.arp_src_port = ProtoField.uint8("axon.arp.src_port", "Source host port", base.DEC, nil, 0xf0)
f.arp_tgt_port = ProtoField.uint8("axon.arp.tgt_port", "Target host port", base.DEC, nil, 0x0f)
f.arp_xid = ProtoField.uint32("axon.arp.xid", "Transaction id", base.HEX)
f.arp_src_mac = ProtoField.ether("axon.arp.src_mac", "Source host MAC")
f.arp_src_route_mac = ProtoField.ether("axon.arp.src_route_mac", "Source route MAC")
f.arp_src_ip = ProtoField.ipv4("axon.arp.src_ip", "Source host IP")
f.arp_tgt_mac = ProtoField.ether("axon.arp.tgt_mac", "Target host MAC")
f.arp_tgt_route_mac = ProtoField.ether("axon.arp.tgt_route_mac", "Target route MAC")
f.arp_tgt_ip = ProtoField.ipv4("axon.arp.tgt_ip", "Target host IP")
f.hello_port = ProtoField.uint8("axon.hello.port", "Sender port", base.DEC)
f.hello_magic = ProtoField.string("axon.hello.magic", "Magic")
f.hello_device = ProtoField.uint64("axon.hello.device", "Sender device id", base.DEC)

f.probe_options = ProtoField.uint8("axon.probe.options", "Options", base.HEX)
f.probe_ts = ProtoField.bool("axon.probe.timestamps", "Timestamps", 8, nil, 0x01)
f.probe_count = ProtoField.uint8("axon.probe.count", "Records", base.DEC)
f.probe_id = ProtoField.uint32("axon.probe.id", "Probe id", base.DEC)
f.probe_device = ProtoField.uint64("axon.probe.device", "Device id", base.DEC)
f.probe_port = ProtoField.uint8("axon.probe.port", "Port", base.DEC)
f.probe_point = ProtoField.uint8("axon.probe.point", "Point", base.DEC, point_names)
f.probe_time = ProtoField.uint64("axon.probe.time_ps", "Time (ps)", base.DEC)

f.error_code = ProtoField.uint8("axon.error.code", "Error", base.DEC, error_names)
f.error_orig_type = ProtoField.uint8("axon.error.orig_type", "Original type", base.HEX, type_names)

local ef_bad_len = ProtoExpert.new("axon.bad_len", "Header length disagrees with the hop counts",
    expert.group.MALFORMED, expert.severity.ERROR)
local ef_short = ProtoExpert.new("axon.short", "Truncated Axon frame", expert.group.MALFORMED, expert.severity.ERROR)
axon.experts = { ef_bad_len, ef_short }

local eth_dissector = Dissector.get("eth_withoutfcs")
local data_dissector = Dissector.get("data")

-- Plain arithmetic, no bit library: Wireshark up to 4.2 embeds Lua 5.1/5.2 (with `bit`), 4.4 and
-- later embed Lua 5.4 (without it).
local function hi(byte)
    return math.floor(byte / 16)
end

local function lo(byte)
    return byte % 16
end

local function nibble(buf, n)
    local byte = buf(math.floor(n / 2), 1):uint()
    if n % 2 == 0 then
        return hi(byte)
    end
    return lo(byte)
end

local function hop_text(h)
    return string.format("%x", h)
end

local function dissect_control(buf, pinfo, tree)
    if buf:len() < 1 then
        return ""
    end
    local kind = buf(0, 1):uint()
    tree:add(f.ctl_kind, buf(0, 1))
    if (kind == 1 or kind == 2) and buf:len() >= 38 then
        tree:add(f.arp_src_port, buf(1, 1))
        tree:add(f.arp_tgt_port, buf(1, 1))
        tree:add(f.arp_xid, buf(2, 4))
        tree:add(f.arp_src_mac, buf(6, 6))
        tree:add(f.arp_src_route_mac, buf(12, 6))
        tree:add(f.arp_src_ip, buf(18, 4))
        tree:add(f.arp_tgt_mac, buf(22, 6))
        tree:add(f.arp_tgt_route_mac, buf(28, 6))
        tree:add(f.arp_tgt_ip, buf(34, 4))
        return string.format("%s %s -> %s", kind_names[kind], tostring(buf(18, 4):ipv4()), tostring(buf(34, 4):ipv4()))
    elseif (kind == 3 or kind == 4) and buf:len() >= 14 then
        tree:add(f.hello_port, buf(1, 1))
        tree:add(f.hello_magic, buf(2, 4))
        tree:add(f.hello_device, buf(6, 8))
        return string.format("%s from device %s port %d", kind_names[kind], tostring(buf(6, 8):uint64()), buf(1, 1):uint())
    elseif kind_names[kind] then
        tree:add_proto_expert_info(ef_short)
    end
    return kind_names[kind] or string.format("control kind %d", kind)
end

local function dissect_probe(buf, pinfo, tree)
    if buf:len() < 6 then
        tree:add_proto_expert_info(ef_short)
        return "Probe"
    end
    tree:add(f.probe_options, buf(0, 1))
    tree:add(f.probe_ts, buf(0, 1))
    tree:add(f.probe_count, buf(1, 1))
    tree:add(f.probe_id, buf(2, 4))
    local count = buf(1, 1):uint()
    for i = 0, count - 1 do
        local at = 6 + 18 * i
        if buf:len() < at + 18 then
            tree:add_proto_expert_info(ef_short)
            break
        end
        local rec = tree:add(axon, buf(at, 18), string.format("Record %d", i))
        rec:add(f.probe_device, buf(at, 8))
        rec:add(f.probe_port, buf(at + 8, 1))
        rec:add(f.probe_point, buf(at + 9, 1))
        rec:add(f.probe_time, buf(at + 10, 8))
    end
    return string.format("Probe id %d, %d records", buf(2, 4):uint(), count)
end

function axon.dissector(buf, pinfo, root)
    if buf:len() < 6 then
        return 0
    end
    pinfo.cols.protocol = "Axon"
    local hl = buf(1, 1):uint() * 16 + hi(buf(2, 1):uint())
    local fwd = lo(buf(2, 1):uint()) * 256 + buf(3, 1):uint()
    local rev = buf(4, 1):uint() * 16 + hi(buf(5, 1):uint())
    local tree = root:add(axon, buf(0, math.min(hl, buf:len())))
    local ptype = buf(0, 1):uint()
    tree:add(f.type, buf(0, 1))
    tree:add(f.hdr_len, buf(1, 2))
    tree:add(f.fwd_count, buf(2, 2))
    tree:add(f.rev_count, buf(4, 2))
    if hl ~= math.floor((FIXED_NIBBLES + fwd + rev + 1) / 2) then
        tree:add_proto_expert_info(ef_bad_len)
        return buf:len()
    end
    if buf:len() < hl then
        tree:add_proto_expert_info(ef_short)
        return buf:len()
    end
    if fwd > 0 then
        tree:add(f.next_hop, buf(5, 1))
    end
    local fwd_hops, rev_hops = {}, {}
    for i = 0, fwd + rev - 1 do
        local n = FIXED_NIBBLES + i
        local h = nibble(buf, n)
        if i < fwd then
            fwd_hops[#fwd_hops + 1] = hop_text(h)
        else
            rev_hops[#rev_hops + 1] = hop_text(h)
        end
    end
    tree:add(f.fwd_path, buf(5, hl - 5), table.concat(fwd_hops, "."))
    tree:add(f.rev_path, buf(5, hl - 5), table.concat(rev_hops, "."))
    for i = 0, fwd + rev - 1 do
        local n = FIXED_NIBBLES + i
        local field = (i < fwd) and f.fwd_hop or f.rev_hop
        tree:add(field, buf(math.floor(n / 2), 1), nibble(buf, n))
    end
    local route = string.format("fwd [%s] rev [%s]", table.concat(fwd_hops, "."), table.concat(rev_hops, "."))
    local body = buf(hl):tvb()
    local name = type_names[ptype] or string.format("type 0x%02x", ptype)
    if ptype == TYPE_ETHERNET then
        pinfo.cols.info = "Axon " .. route
        eth_dissector:call(body, pinfo, root)
        pinfo.cols.protocol = "Axon/" .. tostring(pinfo.cols.protocol)
        return buf:len()
    end
    local info = name
    if ptype == TYPE_CONTROL then
        info = dissect_control(body, pinfo, tree)
    elseif ptype == TYPE_PROBE then
        info = dissect_probe(body, pinfo, tree)
    elseif ptype == TYPE_ERROR and body:len() >= 2 then
        tree:add(f.error_code, body(0, 1))
        tree:add(f.error_orig_type, body(1, 1))
        local code = body(0, 1):uint()
        info = "Error: " .. (error_names[code] or tostring(code))
        if body:len() > 2 then
            data_dissector:call(body(2):tvb(), pinfo, root)
        end
    elseif body:len() > 0 then
        data_dissector:call(body, pinfo, root)
    end
    pinfo.cols.info = info .. ", " .. route
    return buf:len()
end

local user0 = (wtap_encaps and wtap_encaps.USER0) or (wtap and wtap.USER0) or 45
DissectorTable.get("wtap_encap"):add(user0, axon)
