-- FeliCa dissector for Wireshark and tshark, for the captures `felica trace export` writes.
--
-- pcapng (link type USER1, 148): each frame is a whole FeliCa packet, LEN byte included;
-- the packet's direction flag says command (outbound) or response (inbound).
-- Classic pcap (link type USER0, 147): frames without the LEN byte, no direction.
-- Without a direction, the code decides: commands have even codes, responses odd ones.
--
-- Install: copy this file to ~/.local/lib/wireshark/plugins/ (Wireshark 4.x and tshark
-- load every .lua file there), or load it once: tshark -X lua_script:felica.lua -r FILE.
-- Filter fields: felica.code, felica.idm, felica.service, felica.block.number,
-- felica.key_version, felica.sf1, felica.sf2 and more (Docs/traces.md lists them).
--
-- Written for this project; it decodes every command and response the project's codec
-- knows, with expert info on frames that are truncated, too long, or whose LEN disagrees.

local felica = Proto("felica_trace", "FeliCa (felica trace export)")

local commands = {
    [0x00] = "Polling",
    [0x02] = "Request Service",
    [0x04] = "Request Response",
    [0x06] = "Read Without Encryption",
    [0x08] = "Write Without Encryption",
    [0x0A] = "Search Service Code",
    [0x0C] = "Request System Code",
    [0x0E] = "Request Block Information",
    [0x3C] = "Request Specification Version",
    [0x3E] = "Reset Mode",
}
local codes = {}
for code, name in pairs(commands) do
    codes[code] = name
    codes[code + 1] = name .. " response"
end

local request_codes = { [0] = "none", [1] = "system code", [2] = "communication performance" }
local time_slots = { [0] = "1 slot", [1] = "2 slots", [3] = "4 slots", [7] = "8 slots", [15] = "16 slots" }
local modes = { [0] = "Mode 0", [1] = "Mode 1", [2] = "Mode 2", [3] = "Mode 3" }
local sf1_names = { [0x00] = "no error", [0xFF] = "not tied to one block" }
local sf2_names = {
    [0x00] = "success",
    [0x01] = "purse data under/overflow",
    [0x02] = "cashback data exceeded",
    [0x03] = "limited purse data out of range",
    [0x70] = "memory error (fatal)",
    [0x71] = "memory rewrite count over limit (warning)",
    [0xA1] = "illegal number of services",
    [0xA2] = "illegal command packet (number of blocks)",
    [0xA3] = "illegal block list (service order)",
    [0xA4] = "illegal service type",
    [0xA5] = "access not allowed",
    [0xA6] = "illegal service code list",
    [0xA7] = "illegal block list (access mode)",
    [0xA8] = "illegal block number (out of range)",
    [0xA9] = "data write failure",
    [0xAA] = "key change failure",
    [0xAB] = "illegal package parity or MAC",
    [0xAC] = "illegal parameter",
    [0xAD] = "service exists already",
    [0xAE] = "illegal system code",
    [0xAF] = "too many simultaneous cyclic writes",
    [0xC0] = "illegal package identifier",
    [0xC1] = "illegal parameter (package)",
    [0xC2] = "command disabled",
    [0xC3] = "illegal node property",
}
local element_lengths = { [2] = "2 bytes (block 0-255)", [3] = "3 bytes (block 0-65535)" }
local consoles = {
    [0x03] = "fare adjustment machine", [0x05] = "bus", [0x07] = "ticket vending machine",
    [0x08] = "ticket machine", [0x09] = "charging machine", [0x12] = "ticket vending machine (ticket issued)",
    [0x16] = "ticket gate", [0x17] = "simple ticket gate", [0x18] = "window terminal",
    [0x1A] = "gate terminal", [0x1B] = "mobile phone", [0x1C] = "connection adjustment machine",
    [0x1D] = "transfer gate", [0x1F] = "bus charging machine", [0x46] = "VIEW ALTTE",
    [0x48] = "point exchange", [0xC7] = "shop terminal", [0xC8] = "vending machine",
}
local processes = {
    [0x01] = "fare", [0x02] = "charge", [0x03] = "ticket purchase", [0x04] = "fare adjustment",
    [0x05] = "adjustment at exit", [0x06] = "window exit", [0x07] = "new issue",
    [0x08] = "deduction at window", [0x0D] = "bus (PiTaPa)", [0x0F] = "bus (IruCa)",
    [0x11] = "reissue", [0x13] = "payment (bus)", [0x14] = "auto-charge", [0x15] = "auto-charge",
    [0x1F] = "bus charge", [0x23] = "ticket purchase (bus/tram)", [0x24] = "ticket purchase (bus/tram)",
    [0x25] = "ticket purchase (bus/tram)", [0x46] = "product sale", [0x48] = "point exchange",
    [0x49] = "product sale charge", [0x4A] = "product sale cancel", [0x4B] = "product sale cancel",
}

local f = {
    len = ProtoField.uint8("felica.len", "LEN", base.DEC),
    code = ProtoField.uint8("felica.code", "Code", base.HEX, codes),
    response = ProtoField.bool("felica.response", "Response"),
    response_to = ProtoField.framenum("felica.response_to", "Response to", base.NONE, frametype.REQUEST),
    idm = ProtoField.uint64("felica.idm", "IDm", base.HEX),
    pmm = ProtoField.uint64("felica.pmm", "PMm", base.HEX),
    system_code = ProtoField.uint16("felica.system_code", "System code", base.HEX),
    system_count = ProtoField.uint8("felica.system_count", "Number of systems", base.DEC),
    request_code = ProtoField.uint8("felica.request_code", "Request code", base.DEC, request_codes),
    time_slot = ProtoField.uint8("felica.time_slot", "Time slot number", base.DEC, time_slots),
    request_data = ProtoField.uint16("felica.request_data", "Request data", base.HEX),
    node_count = ProtoField.uint8("felica.node_count", "Number of nodes", base.DEC),
    node = ProtoField.uint16("felica.node", "Node code", base.HEX),
    key_version = ProtoField.uint16("felica.key_version", "Key version", base.HEX),
    assigned_blocks = ProtoField.uint16("felica.assigned_blocks", "Assigned blocks", base.DEC),
    service_count = ProtoField.uint8("felica.service_count", "Number of services", base.DEC),
    service = ProtoField.uint16("felica.service", "Service code", base.HEX),
    area = ProtoField.uint16("felica.area", "Area code", base.HEX),
    area_end = ProtoField.uint16("felica.area_end", "Area end code", base.HEX),
    end_of_list = ProtoField.bool("felica.end_of_list", "End of the node list"),
    index = ProtoField.uint16("felica.index", "Index", base.DEC),
    block_count = ProtoField.uint8("felica.block_count", "Number of blocks", base.DEC),
    block = ProtoField.none("felica.block", "Block"),
    block_length = ProtoField.uint8("felica.block.length", "Element length", base.DEC, element_lengths),
    block_service_index = ProtoField.uint8("felica.block.service_index", "Service index", base.DEC),
    block_access_mode = ProtoField.uint8("felica.block.access_mode", "Access mode", base.DEC),
    block_number = ProtoField.uint16("felica.block.number", "Block number", base.DEC),
    block_service = ProtoField.uint16("felica.block.service", "Service code", base.HEX),
    block_data = ProtoField.bytes("felica.block.data", "Data", base.SPACE),
    sf1 = ProtoField.uint8("felica.sf1", "Status flag 1", base.HEX, sf1_names),
    sf2 = ProtoField.uint8("felica.sf2", "Status flag 2", base.HEX, sf2_names),
    mode = ProtoField.uint8("felica.mode", "Mode", base.DEC, modes),
    format_version = ProtoField.uint8("felica.format_version", "Format version", base.HEX),
    version = ProtoField.uint16("felica.version", "Basic version", base.HEX),
    option_count = ProtoField.uint8("felica.option_count", "Number of options", base.DEC),
    option_version = ProtoField.uint16("felica.option_version", "Option version", base.HEX),
    reserved = ProtoField.uint16("felica.reserved", "Reserved", base.HEX),
    transit_balance = ProtoField.uint16("felica.transit.balance", "Balance (yen)", base.DEC),
    transit_card_type = ProtoField.uint8("felica.transit.card_type", "Card type", base.DEC),
    transit_counter = ProtoField.uint16("felica.transit.counter", "Transaction counter", base.DEC),
    transit_console = ProtoField.uint8("felica.transit.console", "Console", base.HEX, consoles),
    transit_process = ProtoField.uint8("felica.transit.process", "Process", base.HEX, processes),
    transit_date = ProtoField.string("felica.transit.date", "Date"),
    transit_sequence = ProtoField.uint32("felica.transit.sequence", "Sequence number", base.DEC),
}
local field_list = {}
for _, field in pairs(f) do field_list[#field_list + 1] = field end
felica.fields = field_list

local e = {
    truncated = ProtoExpert.new("felica.expert.truncated", "Frame ends before the packet does",
        expert.group.MALFORMED, expert.severity.ERROR),
    len_mismatch = ProtoExpert.new("felica.expert.len_mismatch", "LEN disagrees with the frame length",
        expert.group.MALFORMED, expert.severity.ERROR),
    trailing = ProtoExpert.new("felica.expert.trailing", "Bytes after the end of the packet",
        expert.group.MALFORMED, expert.severity.ERROR),
    bad_field = ProtoExpert.new("felica.expert.bad_field", "Field value outside what the packet allows",
        expert.group.MALFORMED, expert.severity.ERROR),
    unknown_code = ProtoExpert.new("felica.expert.unknown_code", "Unknown command or response code",
        expert.group.UNDECODED, expert.severity.WARN),
    direction = ProtoExpert.new("felica.expert.direction", "Code disagrees with the packet's direction",
        expert.group.SEQUENCE, expert.severity.WARN),
    status = ProtoExpert.new("felica.expert.status", "The card reports an error",
        expert.group.RESPONSE_CODE, expert.severity.NOTE),
}
felica.experts = { e.truncated, e.len_mismatch, e.trailing, e.bad_field, e.unknown_code, e.direction, e.status }

-- The last command seen, and per response frame the command it answers, so a read's
-- blocks and a Request Service's key versions are named. Filled on the first pass.
local last_command = nil
local answers = {}
function felica.init()
    last_command = nil
    answers = {}
end

local function hex16(v) return string.format("%04X", v) end

-- A cursor over the packet body: each read checks that the bytes are there and marks the
-- frame truncated (once) when they are not.
local Reader = {}
Reader.__index = Reader
local function reader(tvb, offset, tree, pinfo)
    return setmetatable({ tvb = tvb, pos = offset, tree = tree, pinfo = pinfo, ok = true }, Reader)
end
function Reader:left() return self.tvb:len() - self.pos end
function Reader:need(n, what)
    if not self.ok then return false end
    if self:left() >= n then return true end
    self.tree:add_proto_expert_info(e.truncated,
        string.format("Frame ends before %s (%d byte%s needed, %d left)", what, n, n == 1 and "" or "s", self:left()))
    self.ok = false
    return false
end
function Reader:range(n) local r = self.tvb(self.pos, n); self.pos = self.pos + n; return r end
function Reader:u8(field, what, tree)
    if not self:need(1, what) then return nil end
    local r = self:range(1)
    local item = (tree or self.tree):add(field, r)
    return r:uint(), item
end
function Reader:u16le(field, what, tree)
    if not self:need(2, what) then return nil end
    local r = self:range(2)
    local item = (tree or self.tree):add_le(field, r)
    return r:le_uint(), item
end
function Reader:u16be(field, what, tree)
    if not self:need(2, what) then return nil end
    local r = self:range(2)
    local item = (tree or self.tree):add(field, r)
    return r:uint(), item
end
function Reader:bytes(field, n, what, tree)
    if not self:need(n, what) then return nil end
    local r = self:range(n)
    local item = (tree or self.tree):add(field, r)
    return r, item
end
-- Bytes left over once the packet is complete.
function Reader:finish()
    if self.ok and self:left() > 0 then
        self.tree:add_proto_expert_info(e.trailing,
            string.format("%d byte%s after the end of the packet", self:left(), self:left() == 1 and "" or "s"))
    end
end
function Reader:bad(item, text)
    (item or self.tree):add_proto_expert_info(e.bad_field, text)
end

local function idm(r, info)
    local range = r:bytes(f.idm, 8, "the IDm")
    if range and info then info.idm = tostring(range:bytes()) end
    return range
end

-- `m service×m n element×n` of Read and Write Without Encryption; returns the services
-- and the block list elements read.
local function block_access(r, info)
    local services, elements = {}, {}
    local m, m_item = r:u8(f.service_count, "the number of services")
    if not m then return services, elements end
    if m < 1 or m > 16 then r:bad(m_item, string.format("Number of services %d is outside 1-16", m)) end
    for i = 1, m do
        local code = r:u16le(f.service, "service code " .. (i - 1))
        if not code then return services, elements end
        services[#services + 1] = code
    end
    local n, n_item = r:u8(f.block_count, "the number of blocks")
    if not n then return services, elements end
    if n < 1 then r:bad(n_item, "Number of blocks is 0") end
    for i = 1, n do
        if not r:need(1, "block list element " .. (i - 1)) then return services, elements end
        local head = r.tvb(r.pos, 1):uint()
        local length = head >= 0x80 and 2 or 3
        if not r:need(length, "block list element " .. (i - 1)) then return services, elements end
        local range = r.tvb(r.pos, length)
        local index, mode = head % 16, math.floor(head / 16) % 8
        local number = length == 2 and r.tvb(r.pos + 1, 1):uint() or r.tvb(r.pos + 1, 2):le_uint()
        local service = services[index + 1]
        local label = string.format("Block %s:%d", service and hex16(service) or ("#" .. index), number)
        local t = r.tree:add(f.block, range):set_text(label)
        t:add(f.block_length, length):set_generated()
        t:add(f.block_service_index, r.tvb(r.pos, 1), index)
        t:add(f.block_access_mode, r.tvb(r.pos, 1), mode)
        if length == 2 then
            t:add(f.block_number, r.tvb(r.pos + 1, 1), number)
        else
            t:add_le(f.block_number, r.tvb(r.pos + 1, 2))
        end
        if service then
            t:add(f.block_service, service):set_generated()
        else
            r:bad(t, string.format("Block list element %d names service %d, only %d listed", i - 1, index, #services))
        end
        elements[#elements + 1] = { service = service, number = number, tree = t }
        r.pos = r.pos + length
    end
    return services, elements
end

-- `services=[008B,090F] blocks=008B:0,090F:0…13`: consecutive blocks of a service as runs.
local function summary(services, elements)
    local parts, run = {}, nil
    local function flush()
        if not run then return end
        local name = (run.service and hex16(run.service) or "?") .. ":" .. run.first
        if run.last ~= run.first then name = name .. "…" .. run.last end
        parts[#parts + 1] = name
    end
    for _, el in ipairs(elements) do
        if run and run.service == el.service and run.last + 1 == el.number then
            run.last = el.number
        else
            flush()
            run = { service = el.service, first = el.number, last = el.number }
        end
    end
    flush()
    local codes_text = {}
    for _, s in ipairs(services) do codes_text[#codes_text + 1] = hex16(s) end
    return "services=[" .. table.concat(codes_text, ",") .. "] blocks=" .. table.concat(parts, ",")
end

-- Transit IC blocks (Suica and the cards sharing its layout): attributes and history.
local function transit(tree, block, service)
    local b = block
    if service == 0x008B then
        local t = tree:add(b, "Transit IC attributes")
        t:add(f.transit_card_type, b(8, 1), math.floor(b(8, 1):uint() / 16))
        t:add_le(f.transit_balance, b(11, 2))
        t:add(f.transit_counter, b(14, 2))
        return string.format(" balance=%d", b(11, 2):le_uint())
    elseif service == 0x090F then
        local date = b(4, 2):uint()
        if date == 0 then
            tree:add(b, "Transit IC history: empty slot")
            return ""
        end
        local text = string.format("20%02d-%02d-%02d", math.floor(date / 512), math.floor(date / 32) % 16, date % 32)
        local t = tree:add(b, "Transit IC history " .. text)
        t:add(f.transit_console, b(0, 1))
        t:add(f.transit_process, b(1, 1), b(1, 1):uint() % 128)
        t:add(f.transit_date, b(4, 2), text)
        t:add_le(f.transit_balance, b(10, 2))
        t:add(f.transit_sequence, b(12, 3))
        return ""
    end
    return ""
end

local function dissect_command(code, r, pinfo, tree, info)
    local name = commands[code]
    local text = name
    if code == 0x00 then
        local sc = r:u16be(f.system_code, "the system code")
        local rc, rc_item = r:u8(f.request_code, "the request code")
        local ts, ts_item = r:u8(f.time_slot, "the time slot number")
        if rc and not request_codes[rc] then r:bad(rc_item, string.format("Request code %d is not 0, 1 or 2", rc)) end
        if ts and not time_slots[ts] then r:bad(ts_item, string.format("Time slot number %d is not 0, 1, 3, 7 or 15", ts)) end
        info.request_code = rc
        if sc then text = text .. " system=" .. hex16(sc) end
        if ts and time_slots[ts] then text = text .. " " .. time_slots[ts] end
    elseif code == 0x02 or code == 0x0E then
        idm(r, info)
        local n, n_item = r:u8(f.node_count, "the number of nodes")
        if n and (n < 1 or n > 32) then r:bad(n_item, string.format("Number of nodes %d is outside 1-32", n)) end
        local nodes = {}
        for i = 1, n or 0 do
            local node = r:u16le(f.node, "node code " .. (i - 1))
            if not node then break end
            nodes[#nodes + 1] = node
        end
        info.nodes = nodes
        local list = {}
        for _, node in ipairs(nodes) do list[#list + 1] = hex16(node) end
        text = text .. " nodes=[" .. table.concat(list, ",") .. "]"
    elseif code == 0x06 or code == 0x08 then
        idm(r, info)
        local services, elements = block_access(r, info)
        info.services, info.elements = services, elements
        if code == 0x08 then
            for _, el in ipairs(elements) do
                local data = r:bytes(f.block_data, 16, "the data of block " .. el.number, el.tree)
                if not data then break end
            end
        end
        text = text .. " " .. summary(services, elements)
    elseif code == 0x0A then
        idm(r, info)
        local index = r:u16le(f.index, "the index")
        if index then text = text .. " index=" .. index end
    elseif code == 0x3C or code == 0x3E then
        idm(r, info)
        local reserved, item = r:u16be(f.reserved, "the reserved field")
        if reserved and reserved ~= 0 then r:bad(item, "Reserved field is not 0000") end
    else
        idm(r, info)
    end
    return text
end

local function status(r, tree)
    local sf1, sf1_item = r:u8(f.sf1, "status flag 1")
    local sf2, sf2_item = r:u8(f.sf2, "status flag 2")
    if not (sf1 and sf2) then return nil end
    if sf1 > 0 and sf1 < 0xFF then sf1_item:append_text(string.format(" (block list element %d)", sf1)) end
    local meaning = sf2_names[sf2] or string.format("unknown status 0x%02X", sf2)
    if sf1 ~= 0 then
        sf2_item:add_proto_expert_info(e.status, "The card reports an error: " .. meaning)
    end
    return sf1, string.format("SF1=0x%02X SF2=0x%02X (%s)", sf1, sf2, meaning)
end

local function dissect_response(code, r, pinfo, tree, command)
    local name = codes[code]
    local text = name
    if code == 0x01 then
        idm(r)
        r:bytes(f.pmm, 8, "the PMm")
        if r.ok and r:left() >= 2 then
            local rd, item = r:u16be(f.request_data, "the request data")
            local label = "data"
            if command and command.request_code == 1 then
                item:append_text(" (system code)")
                label = "system"
            elseif command and command.request_code == 2 then
                item:append_text(" (communication performance)")
                label = "performance"
            end
            text = text .. " " .. label .. "=" .. hex16(rd)
        end
    elseif code == 0x03 then
        idm(r)
        local n = r:u8(f.node_count, "the number of nodes")
        local absent = 0
        for i = 1, n or 0 do
            local v, item = r:u16le(f.key_version, "key version " .. (i - 1))
            if not v then break end
            local node = command and command.nodes and command.nodes[i]
            if v == 0xFFFF then
                absent = absent + 1
                item:append_text(" absent: the card has no " .. (node and ("node " .. hex16(node)) or "such node"))
            elseif node then
                item:append_text(" (node " .. hex16(node) .. ")")
            end
        end
        if n then text = string.format("%s %d node%s, %d absent", text, n, n == 1 and "" or "s", absent) end
    elseif code == 0x05 then
        idm(r)
        local mode, item = r:u8(f.mode, "the mode")
        if mode and mode > 3 then r:bad(item, string.format("Mode %d is outside 0-3", mode)) end
    elseif code == 0x07 then
        idm(r)
        local sf1, status_text = status(r, tree)
        if status_text then text = text .. " " .. status_text end
        if sf1 == 0 then
            local n = r:u8(f.block_count, "the number of blocks")
            local elements = command and command.elements or {}
            local extra = ""
            for i = 1, n or 0 do
                if not r:need(16, "the data of block " .. (i - 1)) then break end
                local range = r.tvb(r.pos, 16)
                local el = (#elements == n) and elements[i] or nil
                local label = el and string.format("Block %s:%d", el.service and hex16(el.service) or "?", el.number)
                    or string.format("Block %d", i - 1)
                local t = tree:add(f.block, range):set_text(label)
                if el then
                    t:add(f.block_number, el.number):set_generated()
                    if el.service then t:add(f.block_service, el.service):set_generated() end
                end
                t:add(f.block_data, range)
                if el and el.service then extra = extra .. transit(t, range, el.service) end
                r.pos = r.pos + 16
            end
            if n then text = text .. " blocks=" .. n .. extra end
        end
    elseif code == 0x09 or code == 0x3F then
        idm(r)
        local _, status_text = status(r, tree)
        if status_text then text = text .. " " .. status_text end
    elseif code == 0x0B then
        idm(r)
        if r:need(2, "the node code") then
            local node = r.tvb(r.pos, 2):le_uint()
            if node == 0xFFFF then
                r:u16le(f.end_of_list, "the node code")
                text = text .. " end of list"
            elseif node % 64 <= 1 then
                r:u16le(f.area, "the area code")
                local last = r:u16le(f.area_end, "the area end code")
                text = text .. " area " .. hex16(node) .. (last and ("-" .. hex16(last)) or "")
            else
                r:u16le(f.service, "the service code")
                text = text .. " service " .. hex16(node)
            end
        end
    elseif code == 0x0D then
        idm(r)
        local n = r:u8(f.system_count, "the number of systems")
        local list = {}
        for i = 1, n or 0 do
            local sc = r:u16be(f.system_code, "system code " .. (i - 1))
            if not sc then break end
            list[#list + 1] = hex16(sc)
        end
        text = text .. " systems=[" .. table.concat(list, ",") .. "]"
    elseif code == 0x0F then
        idm(r)
        local n = r:u8(f.node_count, "the number of nodes")
        for i = 1, n or 0 do
            if not r:u16le(f.assigned_blocks, "block count " .. (i - 1)) then break end
        end
    elseif code == 0x3D then
        idm(r)
        local sf1, status_text = status(r, tree)
        if status_text then text = text .. " " .. status_text end
        if sf1 == 0 then
            r:u8(f.format_version, "the format version")
            local v = r:u16le(f.version, "the basic version")
            local n = r:u8(f.option_count, "the number of options")
            for i = 1, n or 0 do
                if not r:u16le(f.option_version, "option version " .. (i - 1)) then break end
            end
            if v then text = text .. " version=" .. hex16(v) end
        end
    end
    return text
end

-- with_len: the frame starts with the LEN byte (pcapng export) or not (classic pcap).
local function dissect(tvb, pinfo, root, with_len)
    pinfo.cols.protocol = "FeliCa"
    local tree = root:add(felica, tvb())
    local r = reader(tvb, 0, tree, pinfo)
    if with_len then
        local len, item = r:u8(f.len, "the LEN byte")
        if not len then
            pinfo.cols.info = "Empty frame"
            return
        end
        if len ~= tvb:len() then
            item:add_proto_expert_info(e.len_mismatch,
                string.format("LEN is %d, the frame holds %d byte%s", len, tvb:len(), tvb:len() == 1 and "" or "s"))
        end
    end
    local code, code_item = r:u8(f.code, "the command code")
    if not code then
        pinfo.cols.info = "Frame without a code"
        return
    end
    local is_response = code % 2 == 1
    if pinfo.p2p_dir == 0 and is_response or pinfo.p2p_dir == 1 and not is_response then
        code_item:add_proto_expert_info(e.direction, string.format("%s code 0x%02X in an %s frame",
            is_response and "Response" or "Command", code, pinfo.p2p_dir == 0 and "outbound" or "inbound"))
    end
    tree:add(f.response, is_response):set_generated()
    local known = is_response and commands[code - 1] or commands[code]
    if not known then
        code_item:add_proto_expert_info(e.unknown_code, string.format("Code 0x%02X is not one this dissector knows", code))
        pinfo.cols.info = string.format("Unknown code 0x%02X", code)
        return
    end
    local text
    if is_response then
        if not pinfo.visited then answers[pinfo.number] = last_command end
        local command = answers[pinfo.number]
        if command and command.code == code - 1 then
            tree:add(f.response_to, command.frame):set_generated()
        else
            command = nil
        end
        text = dissect_response(code, r, pinfo, tree, command)
    else
        local info = { code = code, frame = pinfo.number }
        text = dissect_command(code, r, pinfo, tree, info)
        if not pinfo.visited then last_command = info end
    end
    r:finish()
    tree:append_text(", " .. text)
    pinfo.cols.info = text
end

-- Registered for both link types; which one matched says whether frames carry LEN.
function felica.dissector(tvb, pinfo, root)
    dissect(tvb, pinfo, root, pinfo.match_uint == wtap.USER1)
end

local encap = DissectorTable.get("wtap_encap")
encap:add(wtap.USER1, felica)
encap:add(wtap.USER0, felica)
