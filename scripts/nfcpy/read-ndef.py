"""An independent host reads a Type 3 Tag's NDEF message: nfcpy, with its own RC-S380 driver
and its own Type 3 Tag and NDEF code (nfc.tag.tt3, ndeflib), reads the tag in the reader at
PATH and prints what it found, one line each, in the form `felica ndef --json` can be
compared with:

  product <nfcpy's name of the IC>
  attributes <version> <nbr> <nmaxb> <length>
  record <type> <uri or language:text or payload hex>

  python read-ndef.py PATH       PATH: an nfcpy path, e.g. usb:054c:06c1
Exits 1 when no tag, no NDEF or no records were found.
"""

import sys

import nfc
import nfc.clf

clf = nfc.ContactlessFrontend(sys.argv[1])
try:
    target = clf.sense(nfc.clf.RemoteTarget("212F"), iterations=5, interval=0.2)
    if target is None:
        print("no tag", file=sys.stderr)
        sys.exit(1)
    tag = nfc.tag.activate(clf, target)
    print("product " + tag.product)
    if tag.ndef is None:
        print("no NDEF", file=sys.stderr)
        sys.exit(1)
    attributes = tag.ndef._read_attribute_data()
    print("attributes %d.%d %d %d %d" % (attributes["ver"] >> 4, attributes["ver"] & 15, attributes["nbr"], attributes["nmaxb"], attributes["ln"]))
    for record in tag.ndef.records:
        if record.type == "urn:nfc:wkt:U":
            print("record U " + record.iri)
        elif record.type == "urn:nfc:wkt:T":
            print("record T %s:%s:%s" % (record.language, record.encoding, record.text))
        elif record.type == "urn:nfc:wkt:Sp":
            print("record Sp " + record.resource.iri + " " + ";".join("%s:%s" % t for t in sorted(record.titles.items())) + " " + str(record.action))
        else:
            print("record %s %s" % (record.type, bytes(record.data).hex()))
finally:
    clf.close()
