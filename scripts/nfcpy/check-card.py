"""An independent host checks a card against its image: nfcpy, with its own RC-S380 driver,
reads the card in the reader at PATH and compares every answer with IMAGE (a felica-card/1
JSON file, as `felica dump --json` writes it). It prints one line per difference and exits 1
if there is any, else prints a summary and exits 0.

  python check-card.py PATH IMAGE       PATH: an nfcpy path, e.g. usb:054c:06c1

What it asks, per system: Polling with request codes 0, 1 and 2 and every time-slot count;
Request System Code; the whole Search Service Code walk (root area 0000-FFFE first, then
areas and services in code order); Request Service for every node and one the card lacks;
Request Response; every block of every service readable without a key (and, for the
largest, reads of every size from 1 to 15 blocks); and the status flags of refused or malformed reads (a service needing a key, a
block beyond the service, a service index beyond the list, no services, 16 blocks, an
absent service, a bad access mode). Timeouts are nfcpy's own, from the PMm: a card that
answers later than its PMm allows fails here.
"""

import json
import struct
import sys

import nfc
import nfc.clf
import nfc.tag
import nfc.tag.tt3

problems = []
checks = [0]


def check(ok, what):
    checks[0] += 1
    if not ok:
        problems.append(what)
        print("DIFF: " + what, flush=True)


def service(code):
    return nfc.tag.tt3.ServiceCode(code >> 6, code & 0x3F)


def hexcode(text):
    return int(text, 16)


def read_timeout(pmm, blocks):
    """nfcpy's own read timeout (tt3.read_without_encryption)."""
    a, b, e = pmm[5] & 7, pmm[5] >> 3 & 7, pmm[5] >> 6
    return 302.1E-6 * ((b + 1) * blocks + a + 1) * 4 ** e


def status_of(tag, body, blocks):
    """The SF1 SF2 a Read Without Encryption with this body (after the IDm) earns."""
    rsp = tag.send_cmd_recv_rsp(0x06, bytearray(body), read_timeout(tag.pmm, blocks), check_status=False)
    return (rsp[0], rsp[1])


def expected_nodes(system):
    """Root area first, then areas and services in code order."""
    areas = [(hexcode(a["code"]), hexcode(a["end"])) for a in system.get("areas", [])]
    if not any(code == 0 for code, _ in areas):
        areas.append((0x0000, 0xFFFE))
    nodes = [(code, (code, end)) for code, end in areas]
    nodes += [(hexcode(s["code"]), (hexcode(s["code"]),)) for s in system["services"]]
    return [n for _, n in sorted(nodes, key=lambda n: n[0])]


def check_system(tag, index, system, image, systems):
    code = hexcode(system["code"])
    name = "system {:04X}".format(code)
    idm = bytes.fromhex(system["idm"])
    pmm = bytes.fromhex(system.get("pmm", image["pmm"]))
    bit_rates = image.get("bitRates", [212, 424])

    # Polling with each request code and time-slot count.
    for slots in (0, 1, 3, 7, 15):
        got = tag.polling(code, 0, slots)
        check(bytes(got[0]) == idm and bytes(got[1]) == pmm,
              "{}: Polling ({} slots) gave IDm {} PMm {}".format(name, slots, bytes(got[0]).hex(), bytes(got[1]).hex()))
    got = tag.polling(code, 1)
    check(len(got) == 3 and bytes(got[2]) == struct.pack(">H", code), "{}: Polling RC 1 gave {}".format(name, got))
    got = tag.polling(code, 2)
    performance = 0x0083 if 424 in bit_rates else 0x0001
    check(len(got) == 3 and bytes(got[2]) == struct.pack(">H", performance), "{}: Polling RC 2 gave {}".format(name, got))
    # Address this system from here on, as nfcpy's dump does.
    tag.idm, tag.pmm, tag.sys = got[0], got[1], code

    check(tag.request_system_code() == systems, "{}: Request System Code gave {}".format(name, tag.request_system_code()))
    check(tag.request_response() == 0, "{}: Request Response is not mode 0".format(name))

    # The whole Search Service Code walk.
    walk = []
    for i in range(0x10000):
        node = tag.search_service_code(i)
        if node is None:
            break
        walk.append(tuple(node))
    want = expected_nodes(system)
    check(walk == want, "{}: Search Service Code walk {} differs from the image's {}".format(
        name, [tuple("{:04X}".format(c) for c in n) for n in walk], [tuple("{:04X}".format(c) for c in n) for n in want]))

    # Request Service: key versions of every node, and of one the card lacks.
    nodes = [n[0] for n in want]
    versions = {hexcode(s["code"]): hexcode(s.get("keyVersion", "0000")) for s in system["services"]}
    missing = 0x3FC9
    while missing in versions:
        missing += 0x40
    for start in range(0, len(nodes), 32):
        chunk = nodes[start:start + 32]
        got = tag.request_service([service(c) for c in chunk])
        check(got == [versions.get(c, 0) for c in chunk], "{}: Request Service {} gave {}".format(name, chunk, got))
    check(tag.request_service([service(missing)]) == [0xFFFF], "{}: Request Service of an absent node is not FFFF".format(name))

    # Every block of every readable service, 15 at a time; the largest service also in
    # reads of every size from 1 to 15 blocks (block numbers wrap around its size).
    readable = [s for s in system["services"] if "blocks" in s]
    largest = max(readable, key=lambda s: len(s["blocks"]), default=None)
    for s in readable:
        sc = hexcode(s["code"])
        blocks = [bytes.fromhex(b) for b in s["blocks"]]
        reads = [list(range(start, min(start + 15, len(blocks)))) for start in range(0, len(blocks), 15)]
        if s is largest:
            reads += [[i % len(blocks) for i in range(n)] for n in range(1, 16)]
        for numbers in reads:
            data = tag.read_without_encryption([service(sc)], [nfc.tag.tt3.BlockCode(b) for b in numbers])
            check(bytes(data) == b"".join(blocks[b] for b in numbers),
                  "{}: {:04X} blocks {} read back different data".format(name, sc, numbers))

    # Status flags of refused and malformed reads.
    keyed = [hexcode(s["code"]) for s in system["services"] if "blocks" not in s]
    for sc in keyed[:1]:
        check(status_of(tag, [1, sc & 0xFF, sc >> 8, 1, 0x80, 0], 1) == (0x01, 0xA5), "{}: key service {:04X} not 01 A5".format(name, sc))
    for s in readable[:1]:
        sc = hexcode(s["code"])
        size = len(s["blocks"])
        lo, hi = sc & 0xFF, sc >> 8
        cases = [
            ("a block beyond the service", [1, lo, hi, 1, 0x00, size & 0xFF, size >> 8], (0x01, 0xA8)),
            ("a service index beyond the list", [1, lo, hi, 1, 0x81, 0], (0x01, 0xA3)),
            ("no services", [0, 1, 0x80, 0], (0xFF, 0xA1)),
            ("16 blocks", [1, lo, hi, 16] + [0x80, 0] * 16, (0xFF, 0xA2)),
            ("an absent service", [1, missing & 0xFF, missing >> 8, 1, 0x80, 0], (0x01, 0xA6)),
            ("access mode 1 on a service that is no purse", [1, lo, hi, 1, 0x90, 0], (0x01, 0xA7)),
        ]
        purse = (sc & 0x3F) >= 0x10
        for what, body, want_status in cases:
            if purse and "access mode" in what:
                continue
            got = status_of(tag, body, 16 if what == "16 blocks" else 1)
            check(got == want_status, "{}: {} gave {:02X} {:02X}, expected {:02X} {:02X}".format(
                name, what, got[0], got[1], want_status[0], want_status[1]))
    return len(readable)


def main():
    path, image_path = sys.argv[1], sys.argv[2]
    with open(image_path, encoding="utf-8") as f:
        image = json.load(f)
    clf = nfc.ContactlessFrontend(path)
    try:
        target = clf.sense(nfc.clf.RemoteTarget("212F"))
        if target is None:
            sys.exit("no card")
        tag = nfc.tag.activate(clf, target)
        systems = [hexcode(s["code"]) for s in image["systems"]]
        services = 0
        for index, system in enumerate(image["systems"]):
            services += check_system(tag, index, system, image, systems)
    finally:
        clf.close()
    if problems:
        print("{} of {} checks differ".format(len(problems), checks[0]))
        sys.exit(1)
    print("all {} checks agree ({} systems, {} readable services)".format(checks[0], len(image["systems"]), services))


main()
