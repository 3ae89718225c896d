"""The comparison for felica's benchmarks: nfcpy reading a Suica balance through a PN532
on a serial line, or through a Sony RC-S380 on USB, the way an nfcpy user would write it.

  python suica.py PTY              poll, read the balance (008B and the newest 090F
                                   record, as `felica balance` does), print it, exit
  python suica.py PTY --taps N     connect-and-read loop over N card taps: one JSON line
                                   per card with elapsedMs, from the start of the Polling
                                   that found the card to the printed line

PTY may instead be an nfcpy USB path (`usb:054c:06c1`): nfcpy then drives the RC-S380 with
its own Port-100 driver through libusb (under `felica-sim rcs380`, the emulated one).

nfcpy opens serial ports by name under /dev (`tty:USB0:pn532` is /dev/ttyUSB0); the
emulator's terminal is /dev/pts/N, so the name `tty:bench:pn532` is mapped to it. Everything
else is nfcpy's own: its transport, its PN532 driver, its Type 3 tag.
"""

import json
import sys
import time

import nfc
import nfc.clf
import nfc.clf.transport
import nfc.tag.tt3

PATH = "tty:bench:pn532"


def open_frontend(pty):
    if pty.startswith("usb"):
        return nfc.ContactlessFrontend(pty)
    find = nfc.clf.transport.TTY.find

    def mapped(cls, path):
        return ([pty], "pn532", False) if path == PATH else find(path)

    nfc.clf.transport.TTY.find = classmethod(mapped)
    return nfc.ContactlessFrontend(PATH)


def service(code):
    return nfc.tag.tt3.ServiceCode(code >> 6, code & 0x3F)


def balance(tag):
    """Block 0 of the attributes (008B) and of the history (090F), in one command."""
    data = tag.read_without_encryption(
        [service(0x008B), service(0x090F)],
        [nfc.tag.tt3.BlockCode(0, service=0), nfc.tag.tt3.BlockCode(0, service=1)])
    return data[11] | data[12] << 8


def once(clf):
    target = clf.sense(nfc.clf.RemoteTarget("212F"))
    if target is None:
        sys.exit("no card")
    print("Transit IC  ¥{:,}".format(balance(nfc.tag.activate(clf, target))))


def taps(clf, count):
    sensed = [0.0]
    sense = clf.sense

    def timed_sense(*args, **kwargs):
        sensed[0] = time.monotonic()
        return sense(*args, **kwargs)

    clf.sense = timed_sense

    # Counted where the line is printed: connect() may return False after a card it did
    # read (the card left during its presence check), which must not cost an extra tap.
    printed = [0]

    def on_connect(tag):
        yen = balance(tag)
        elapsed = (time.monotonic() - sensed[0]) * 1000
        print(json.dumps({"idm": tag.identifier.hex(), "balance": yen, "elapsedMs": round(elapsed, 1)}), flush=True)
        printed[0] += 1
        return True  # stay until the card leaves, as `felica watch` does

    while printed[0] < count:
        clf.connect(rdwr={"targets": ["212F"], "on-connect": on_connect, "iterations": 1, "interval": 0.0})


def main():
    clf = open_frontend(sys.argv[1])
    try:
        if len(sys.argv) > 3 and sys.argv[2] == "--taps":
            taps(clf, int(sys.argv[3]))
        else:
            once(clf)
    finally:
        clf.close()


main()
