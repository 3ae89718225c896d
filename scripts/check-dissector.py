#!/usr/bin/env python3
"""Checks the Wireshark dissector (Wireshark/felica.lua) against `felica trace show --json`.

For each trace given: export it as pcapng and as classic pcap, have tshark decode both with
the dissector, and require that every frame is decoded by it, none is malformed or carries
an expert warning, and the fields tshark reports (codes, IDm, service and node codes, block
numbers and data, key versions, status flags, system codes, direction, the device as the
interface description) equal the fields `felica trace show --json` prints for the same
packets. With --damaged, also checks that deliberately damaged frames get their expert info.

usage: check-dissector.py --felica BIN --lua FILE [--damaged] TRACE...
Prints one line per problem; exits 1 when there is any.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

FIELDS = [
    "frame.number", "frame.protocols", "frame.p2p_dir", "frame.interface_description",
    "_ws.malformed", "_ws.expert.severity", "_ws.expert.message",
    "felica.len", "felica.code", "felica.idm", "felica.pmm", "felica.system_code", "felica.request_code",
    "felica.time_slot", "felica.request_data", "felica.node", "felica.service", "felica.area", "felica.area_end",
    "felica.end_of_list", "felica.index", "felica.block.number", "felica.block.service", "felica.block.service_index",
    "felica.block.access_mode", "felica.block.length", "felica.block.data", "felica.key_version",
    "felica.assigned_blocks", "felica.sf1", "felica.sf2", "felica.mode", "felica.version",
    "felica.expert.truncated", "felica.expert.len_mismatch", "felica.expert.trailing",
    "felica.expert.bad_field", "felica.expert.unknown_code", "felica.expert.direction",
]
PI_WARN = 0x00600000

problems = []


def problem(text):
    problems.append(text)
    print("FAIL: " + text, file=sys.stderr)


def run(args, check=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    return p


def tshark(lua, capture):
    args = ["tshark", "-X", f"lua_script:{lua}", "-r", capture, "-T", "json"]
    for f in FIELDS:
        args += ["-e", f]
    frames = json.loads(run(args).stdout or "[]")
    return [frame["_source"]["layers"] for frame in frames]


def ints(layer, field):
    """A field's values as integers (tshark prints hex fields as 0x…)."""
    return [int(v, 0) for v in layer.get(field, [])]


def code16(text):
    return int(text, 16)


def hexstr(layer, field):
    return [v.replace(":", "").replace(" ", "").lower() for v in layer.get(field, [])]


def expected_packets(trace_json):
    """(direction, packet hex, decoded fields) per frame the export writes, in order."""
    out = []
    for line in trace_json.splitlines():
        ex = json.loads(line)
        if "exchange" not in ex:
            continue  # the reader's own report of the card (readerIdentity): no packet, no frame
        out.append(("command", ex["tx"], ex["command"], ex["exchange"]))
        if ex.get("rx"):
            out.append(("response", ex["rx"], ex["response"], ex["exchange"]))
    return out


def compare(where, layer, direction, packet, fields):
    def same(what, got, want):
        if got != want:
            problem(f"{where}: {what}: tshark has {got}, trace show --json has {want}")

    if "undecodable" in fields:
        problem(f"{where}: trace show cannot decode the {direction} {packet}: {fields['undecodable']}")
        return
    same("code", ints(layer, "felica.code"), [fields["code"]])
    if "idm" in fields:
        same("IDm", ints(layer, "felica.idm"), [int(fields["idm"], 16)])
    if "pmm" in fields:
        same("PMm", ints(layer, "felica.pmm"), [int(fields["pmm"], 16)])
    if direction == "command":
        if "systemCode" in fields:
            same("system code", ints(layer, "felica.system_code"), [code16(fields["systemCode"])])
            same("request code", ints(layer, "felica.request_code"), [fields["requestCode"]])
            same("time slot", ints(layer, "felica.time_slot"), [fields["timeSlot"]])
        same("nodes", ints(layer, "felica.node"), [code16(n) for n in fields.get("nodes", [])])
        same("services", ints(layer, "felica.service"), [code16(s) for s in fields.get("services", [])])
        blocks = fields.get("blocks", [])
        same("block numbers", ints(layer, "felica.block.number"), [b["block"] for b in blocks])
        same("block services", ints(layer, "felica.block.service"), [code16(b["service"]) for b in blocks])
        same("block service indexes", ints(layer, "felica.block.service_index"), [b["serviceIndex"] for b in blocks])
        same("block access modes", ints(layer, "felica.block.access_mode"), [b["accessMode"] for b in blocks])
        same("block element lengths", ints(layer, "felica.block.length"), [b["length"] for b in blocks])
        same("written data", hexstr(layer, "felica.block.data"), [b["data"] for b in blocks if "data" in b])
        if "index" in fields:
            same("index", ints(layer, "felica.index"), [fields["index"]])
    else:
        same("key versions", ints(layer, "felica.key_version"),
             [0xFFFF if v is None else code16(v) for v in fields.get("keyVersions", [])])
        status = fields.get("status")
        same("SF1", ints(layer, "felica.sf1"), [status["sf1"]] if status else [])
        same("SF2", ints(layer, "felica.sf2"), [status["sf2"]] if status else [])
        blocks = fields.get("blocks", [])
        same("block data", hexstr(layer, "felica.block.data"), [b["data"] for b in blocks])
        same("block numbers", ints(layer, "felica.block.number"), [b["block"] for b in blocks if "block" in b])
        same("block services", ints(layer, "felica.block.service"), [code16(b["service"]) for b in blocks if "service" in b])
        same("system codes", ints(layer, "felica.system_code"), [code16(s) for s in fields.get("systemCodes", [])])
        same("assigned blocks", ints(layer, "felica.assigned_blocks"), fields.get("blockCounts", []))
        same("request data", ints(layer, "felica.request_data"), [code16(fields["requestData"])] if "requestData" in fields else [])
        same("found service", ints(layer, "felica.service"), [code16(fields["service"])] if "service" in fields else [])
        same("found area", ints(layer, "felica.area"), [code16(fields["area"])] if "area" in fields else [])
        same("area end", ints(layer, "felica.area_end"), [code16(fields["areaEnd"])] if "areaEnd" in fields else [])
        same("end of list", "felica.end_of_list" in layer, bool(fields.get("endOfList")))
        same("mode", ints(layer, "felica.mode"), [fields["mode"]] if "mode" in fields else [])


def clean(where, layer):
    """The frame is ours, not malformed, and has no expert info at warning level or above."""
    protocols = (layer.get("frame.protocols") or [""])[0].split(":")
    if "felica_trace" not in protocols:
        problem(f"{where}: not decoded by the dissector (protocols {':'.join(protocols)})")
        return False
    if "_ws.malformed" in layer:
        problem(f"{where}: malformed: {layer.get('_ws.expert.message')}")
        return False
    serious = [m for m, s in zip(layer.get("_ws.expert.message", []), ints(layer, "_ws.expert.severity")) if s >= PI_WARN]
    if serious:
        problem(f"{where}: expert info: {serious}")
        return False
    return True


def check_trace(felica, lua, trace, work):
    name = os.path.basename(trace)
    shown = run([felica, "trace", "show", "--json", trace], check=False)
    if shown.returncode != 0:
        problem(f"{name}: trace show --json exited {shown.returncode}: {shown.stderr.strip()}")
    packets = expected_packets(shown.stdout)
    header = json.loads(open(trace, encoding="utf-8").readline())
    for fmt in ("pcapng", "pcap"):
        capture = os.path.join(work, f"{name}.{fmt}")
        run([felica, "trace", "export", trace, "--pcap", capture, "--format", fmt, "--lenient"])
        layers = tshark(lua, capture)
        if len(layers) != len(packets):
            problem(f"{name} ({fmt}): tshark shows {len(layers)} frames, the trace holds {len(packets)} packets")
            continue
        for layer, (direction, packet, fields, exchange) in zip(layers, packets):
            where = f"{name} ({fmt}) frame {layer['frame.number'][0]} (exchange {exchange} {direction})"
            if not clean(where, layer):
                continue
            compare(where, layer, direction, packet, fields)
            if fmt == "pcapng":
                want_dir = "0" if direction == "command" else "1"
                if layer.get("frame.p2p_dir") != [want_dir]:
                    problem(f"{where}: direction {layer.get('frame.p2p_dir')}, expected {want_dir}")
                if header.get("device") and layer.get("frame.interface_description") != [header["device"]]:
                    problem(f"{where}: interface description {layer.get('frame.interface_description')}, expected {header['device']}")
                if ints(layer, "felica.len") != [len(packet) // 2]:
                    problem(f"{where}: LEN {layer.get('felica.len')}, packet is {len(packet) // 2} bytes")
    return len(packets)


# Damaged frames: (why, tx hex, rx hex or None, the expert each frame must carry (tx, rx)).
DAMAGED = [
    ("cut Polling response", "0600ffff0100", "1401010112031234", (None, "felica.expert.truncated")),
    ("LEN says 9, frame holds 6", "0900ffff0100", None, ("felica.expert.len_mismatch", None)),
    ("byte after a Request System Code", "0b0c0101120312345678ff", None, ("felica.expert.trailing", None)),
    ("no such command code", "0a200101120312345678", None, ("felica.expert.unknown_code", None)),
    ("element names service 1 of 1", "1006010112031234567801 8b00 01 81 00", None, ("felica.expert.bad_field", None)),
    ("read cut after the services", "1006010112031234567802 8b00 0f09", None, ("felica.expert.truncated", None)),
    ("3-byte element cut", "1106010112031234567801 8b00 01 00 01", None, ("felica.expert.truncated", None)),
    ("Polling with 3 slots", "0600ffff0102", None, ("felica.expert.bad_field", None)),
    ("response as a command", "0c0b0101120312345678ffff", None, ("felica.expert.direction", None)),
    ("read response cut in a block", "1006010112031234567801 8b00 01 8000",
     "1d070101120312345678000001 00112233445566778899aabbccddee", (None, "felica.expert.truncated")),
]


def check_damaged(felica, lua, work):
    lines = ['{"format":"felica-trace/1","device":"hand-made"}']
    expected = []
    for why, tx, rx, experts in DAMAGED:
        tx = tx.replace(" ", "")
        lines.append(json.dumps({"tx": tx, "rx": rx.replace(" ", "") if rx else None, **({} if rx else {"error": "timeout"})}))
        tx_expert, rx_expert = experts
        expected.append((why + " (command)", tx_expert))
        if rx:
            expected.append((why + " (response)", rx_expert))
    trace = os.path.join(work, "damaged.jsonl")
    with open(trace, "w") as out:
        out.write("\n".join(lines) + "\n")
    capture = os.path.join(work, "damaged.pcapng")
    run([felica, "trace", "export", trace, "--pcap", capture])
    layers = tshark(lua, capture)
    if len(layers) != len(expected):
        problem(f"damaged frames: tshark shows {len(layers)} frames, expected {len(expected)}")
        return
    for layer, (why, expert) in zip(layers, expected):
        if expert and expert not in layer:
            problem(f"damaged frame '{why}': no {expert} (expert info: {layer.get('_ws.expert.message')})")
        elif expert is None and "_ws.expert.message" in layer:
            problem(f"damaged frame '{why}': unexpected expert info {layer.get('_ws.expert.message')}")


def main():
    parser = argparse.ArgumentParser(description="Check the Wireshark dissector against felica trace show --json.")
    parser.add_argument("--felica", required=True)
    parser.add_argument("--lua", required=True)
    parser.add_argument("--damaged", action="store_true")
    parser.add_argument("traces", nargs="*")
    args = parser.parse_args()
    frames = 0
    with tempfile.TemporaryDirectory() as work:
        for trace in args.traces:
            try:
                frames += check_trace(args.felica, args.lua, trace, work)
            except (RuntimeError, ValueError, KeyError) as e:
                problem(f"{trace}: {e}")
        if args.damaged:
            try:
                check_damaged(args.felica, args.lua, work)
            except (RuntimeError, ValueError, KeyError) as e:
                problem(f"damaged frames: {e}")
    print(f"check-dissector: {len(args.traces)} traces, {frames} packets, each compared as pcapng and pcap; "
          f"{len(problems)} problem(s)", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
