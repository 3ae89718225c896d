"""An independent host writes and checks a FeliCa Lite-S: nfcpy, with its own PN532 driver
over a serial line (the emulator's pseudo-terminal), its own Type 3 Tag and NDEF code, and
its own FelicaLiteS.authenticate (pyDes), against the tag in the reader at PTY.

  python lite-s.py PTY read              print each record: `U <uri>`, `T <lang>:<text>`, `<type> <hex>`
  python lite-s.py PTY write-uri URI     write an NDEF message of one URI record
  python lite-s.py PTY authenticate HEX  mutual authentication with the 16-byte key HEX;
                                         prints `authenticated` or `not authenticated`

PTY may also be an nfcpy USB path (usb:054c:06c1). Exits 1 when no tag answers, or the tag
has no NDEF for read and write-uri.
"""

import sys

import ndef
import nfc
import nfc.clf
import nfc.clf.transport

PATH = "tty:lites:pn532"


def open_frontend(pty):
    if pty.startswith("usb"):
        return nfc.ContactlessFrontend(pty)
    find = nfc.clf.transport.TTY.find

    def mapped(cls, path):
        return ([pty], "pn532", False) if path == PATH else find(path)

    nfc.clf.transport.TTY.find = classmethod(mapped)
    return nfc.ContactlessFrontend(PATH)


def main():
    clf = open_frontend(sys.argv[1])
    try:
        target = clf.sense(nfc.clf.RemoteTarget("212F"), iterations=5, interval=0.2)
        if target is None:
            sys.exit("no tag")
        tag = nfc.tag.activate(clf, target)
        action = sys.argv[2]
        if action == "authenticate":
            ok = tag.authenticate(bytes.fromhex(sys.argv[3]))
            print("authenticated" if ok else "not authenticated")
            return
        if tag.ndef is None:
            sys.exit("no NDEF")
        if action == "write-uri":
            tag.ndef.records = [ndef.UriRecord(sys.argv[3])]
            print("written %d bytes" % tag.ndef.length)
        elif action == "read":
            for record in tag.ndef.records:
                if record.type == "urn:nfc:wkt:U":
                    print("U " + record.iri)
                elif record.type == "urn:nfc:wkt:T":
                    print("T %s:%s" % (record.language, record.text))
                else:
                    print("%s %s" % (record.type, bytes(record.data).hex()))
        else:
            sys.exit("unknown action " + action)
    finally:
        clf.close()


main()
